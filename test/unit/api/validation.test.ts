// Requests are checked before they are sent, with messages that name the field; valid ones carry every documented field.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ValidationError, validateArticleRequest, type FieldIssue } from '../../../src/api';
import { sendEnvelope, sendErrors, startFaultServer, type FaultServer } from '../../support/fault-server';
import { API_KEY, TEXT, clientFor, rejectionOf } from '../../support/api-client';

const fieldsOf = (issues: FieldIssue[]) => issues.map((issue) => issue.field).sort();

describe('validateArticleRequest', () => {
  it('accepts a text request and a URL request with every documented field', () => {
    assert.deepEqual(validateArticleRequest({ model_id: 'article-audio-1-mini', text: TEXT }), []);
    assert.deepEqual(
      validateArticleRequest({
        model_id: 'article-podcast-1-pro',
        url: 'https://example.com/post?id=1',
        intro_audio_url: 'http://example.com/intro.mp3',
        outro_audio_url: 'https://cdn.example.com/outro.ogg',
      }),
      [],
    );
  });

  it('names model_id when it is missing or not one of the three models', () => {
    const missing = validateArticleRequest({ text: TEXT });
    assert.deepEqual(fieldsOf(missing), ['model_id']);
    assert.match(
      missing[0]!.message,
      /model_id is required.*article-audio-1-mini, article-audio-1-pro, article-podcast-1-pro/,
    );
    const unknown = validateArticleRequest({ model_id: 'gpt-4', text: TEXT });
    assert.deepEqual(fieldsOf(unknown), ['model_id']);
    assert.match(unknown[0]!.message, /model_id must be one of .*\(got "gpt-4"\)/);
  });

  it('names each URL field whose value is not an http(s) URL', () => {
    const issues = validateArticleRequest({
      model_id: 'article-audio-1-pro',
      url: 'not a url',
      intro_audio_url: 'ftp://example.com/intro.mp3',
      outro_audio_url: 'example.com/outro.mp3',
    });
    assert.deepEqual(fieldsOf(issues), ['intro_audio_url', 'outro_audio_url', 'url']);
    assert.match(issues.find((i) => i.field === 'url')!.message, /without spaces/);
    assert.match(issues.find((i) => i.field === 'intro_audio_url')!.message, /http:\/\/ or https:\/\/ .*"ftp"/);
    assert.match(issues.find((i) => i.field === 'outro_audio_url')!.message, /valid absolute URL/);
    assert.deepEqual(fieldsOf(validateArticleRequest({ model_id: 'article-audio-1-pro', url: 42 })), ['url']);
  });

  it('requires text to be 50 to 100000 characters, counted as people count them, ends trimmed', () => {
    const at = (text: string) => validateArticleRequest({ model_id: 'article-audio-1-mini', text });
    assert.deepEqual(at('a'.repeat(50)), []);
    // In words: 100,000 characters without a space would be one run with nothing to read (long-tokens.ts).
    assert.deepEqual(at(`${'aaaa '.repeat(19_999)}aaaa`), []);
    const short = at('a'.repeat(49));
    assert.deepEqual(fieldsOf(short), ['text']);
    assert.match(short[0]!.message, /text must be 50 to 100000 characters.*\(it has 49\)/);
    assert.match(at('a'.repeat(100_001))[0]!.message, /\(it has 100001\)/);
    // 48 emoji are 96 UTF-16 units but 48 characters.
    assert.deepEqual(fieldsOf(at(`Hi${'🎧'.repeat(47)}`)), ['text']);
    assert.deepEqual(at(`Hi${'🎧'.repeat(48)}`), []);
    // Spaces at the ends do not count.
    assert.deepEqual(fieldsOf(at(`   ${'a'.repeat(45)}      \n`)), ['text']);
  });

  it('requires exactly one of url and text', () => {
    const neither = validateArticleRequest({ model_id: 'article-audio-1-mini' });
    assert.equal(neither.length, 1);
    assert.match(
      `${neither[0]!.field}: ${neither[0]!.message}`,
      /^text: text is required unless url is given: give exactly one of url and text/,
    );
    const both = validateArticleRequest({ model_id: 'article-audio-1-mini', text: TEXT, url: 'https://example.com/' });
    assert.equal(both.length, 1);
    assert.match(`${both[0]!.field}: ${both[0]!.message}`, /^url: url cannot be given together with text/);
  });

  it('names unknown fields and rejects what is not an object', () => {
    assert.deepEqual(fieldsOf(validateArticleRequest({ model_id: 'article-audio-1-mini', text: TEXT, voice: 'x' })), [
      'voice',
    ]);
    assert.equal(validateArticleRequest(null).length, 1);
    assert.equal(validateArticleRequest('text').length, 1);
  });
});

describe('submitArticle', () => {
  let server: FaultServer;
  before(async () => {
    server = await startFaultServer();
  });
  after(() => server.close());

  it('does not send an invalid request, and its error names every bad field', async () => {
    const { client } = clientFor(server);
    const before = server.requests.length;
    const { error } = await rejectionOf(
      client.submitArticle({
        model_id: 'nope' as 'article-audio-1-mini',
        text: 'too short',
        intro_audio_url: 'file:///etc/passwd',
      }),
    );
    assert.ok(error instanceof ValidationError);
    assert.deepEqual(fieldsOf(error.fields), ['intro_audio_url', 'model_id', 'text']);
    assert.match(error.message, /model_id must be one of/);
    assert.match(error.message, /text must be 50 to 100000/);
    assert.match(error.message, /intro_audio_url must be an http/);
    assert.doesNotMatch(error.message, /submit again/, 'the advice is added by error-advice.ts');
    assert.equal(server.requests.length, before, 'nothing was sent');
  });

  it('sends every documented field as JSON with the bearer key, and resolves the links', async () => {
    server.on('POST', '/v1/article-to-audio', (_req, res) =>
      sendEnvelope(res, 202, { job_id: 'job-7', links: { self: '/v1/jobs/job-7', stream: '/v1/jobs/job-7/stream' } }),
    );
    const { client } = clientFor(server);
    const request = {
      model_id: 'article-podcast-1-pro',
      url: 'https://example.com/a',
      intro_audio_url: 'https://example.com/i.mp3',
      outro_audio_url: 'https://example.com/o.wav',
    } as const;
    const accepted = await client.submitArticle(request);
    assert.deepEqual(accepted, {
      jobId: 'job-7',
      links: { self: `${server.url}/v1/jobs/job-7`, stream: `${server.url}/v1/jobs/job-7/stream` },
    });
    const sent = server.requestsTo('POST', '/v1/article-to-audio').at(-1)!;
    assert.deepEqual(JSON.parse(sent.body), request);
    assert.equal(sent.headers['content-type'], 'application/json');
    assert.equal(sent.headers.authorization, `Bearer ${API_KEY}`);

    await client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT });
    assert.deepEqual(JSON.parse(server.requestsTo('POST', '/v1/article-to-audio').at(-1)!.body), {
      model_id: 'article-audio-1-mini',
      text: TEXT,
    });
  });

  it("turns the service's 422 into a ValidationError with the service's fields", async () => {
    server.on('POST', '/v1/article-to-audio', (_req, res) =>
      sendErrors(res, 422, [
        { code: 'validation_failed', message: 'could not be fetched as audio', field: 'intro_audio_url' },
        { code: 'validation_failed', message: 'is too long', field: 'text' },
      ]),
    );
    const { client } = clientFor(server);
    const { error } = await rejectionOf(
      client.submitArticle({
        model_id: 'article-audio-1-mini',
        text: TEXT,
        intro_audio_url: 'https://example.com/i.mp3',
      }),
    );
    assert.ok(error instanceof ValidationError);
    assert.equal(error.status, 422);
    assert.deepEqual(error.fields, [
      { field: 'intro_audio_url', message: 'could not be fetched as audio' },
      { field: 'text', message: 'is too long' },
    ]);
    assert.match(error.message, /intro_audio_url: could not be fetched as audio; text: is too long/);
    assert.equal(server.requestsTo('POST', '/v1/article-to-audio').length >= 1, true);
  });
});
