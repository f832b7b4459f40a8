// Facts in src/api, advice in one place: real errors from the real client (against the fault server) state what
// happened and nothing to do; the text a notification shows (notify.ts: "<context>: " + describeClientError, through
// plainMessage) adds the advice once, so the user never reads it twice.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { describeClientError } from '../../../src/error-advice';
import { plainMessage } from '../../../src/views/safe-text';
import { sendErrors, startFaultServer, type FaultServer } from '../../support/fault-server';
import { TEXT, clientFor, rejectionOf } from '../../support/api-client';

/** Words that tell the user what to do: none may appear in a client error's own message. */
const ADVICE =
  /\b(try again|check|set (an|the)|correct (this|these)|shorten|submit (it |the article )?again|wait a little|use another|allow more time|paste)\b/i;

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/)
    .map((sentence) => sentence.trim())
    .filter(Boolean);
}

describe('error messages: facts from src/api, advice once from error-advice.ts', () => {
  let server: FaultServer;
  let closedUrl: string;
  before(async () => {
    server = await startFaultServer();
    const closed = await startFaultServer();
    closedUrl = closed.url;
    await closed.close();
  });
  after(() => server.close());

  const cases: [string, (server: FaultServer) => Promise<unknown>, RegExp][] = [
    [
      '400 without fields',
      async (s) => {
        s.on('POST', '/v1/article-to-audio', (_req, res) => sendErrors(res, 400, [{ code: 'bad', message: 'no' }]));
        return clientFor(s).client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT });
      },
      /Check the request and submit again\.$/,
    ],
    [
      '422 naming a field',
      async (s) => {
        s.on('POST', '/v1/article-to-audio', (_req, res) =>
          sendErrors(res, 422, [{ code: 'invalid', message: 'too odd', field: 'text' }]),
        );
        return clientFor(s).client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT });
      },
      /Correct this field and submit again\.$/,
    ],
    [
      'a request the client refuses itself',
      async (s) => clientFor(s).client.submitArticle({ model_id: 'nope' as 'article-audio-1-mini', text: 'short' }),
      /Correct these fields and submit again\.$/,
    ],
    [
      '401',
      async (s) => {
        s.on('GET', '/v1/jobs/e401', (_req, res) => sendErrors(res, 401, [{ code: 'unauthorized', message: 'no' }]));
        return clientFor(s).client.getJob('e401');
      },
      /Set the right key with "Set API Key"\.$/,
    ],
    [
      '403',
      async (s) => {
        s.on('GET', '/v1/jobs/e403', (_req, res) => sendErrors(res, 403, [{ code: 'forbidden', message: 'no' }]));
        return clientFor(s).client.getJob('e403');
      },
      /Check that the key may use this service/,
    ],
    ['no API key', async (s) => clientFor(s, { apiKey: '' }).client.getJob('nokey'), /Set an API key and try again\.$/],
    [
      '404 for a job',
      async (s) => {
        s.on('GET', '/v1/jobs/gone', (_req, res) => sendErrors(res, 404, [{ code: 'not_found', message: 'no' }]));
        return clientFor(s).client.getJob('gone');
      },
      /It may have expired or belong to another API key; submit the article again\.$/,
    ],
    [
      '404 at submission (not a job service)',
      async (s) =>
        clientFor(`${s.url}/wrong-prefix`).client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT }),
      /Check the service address\.$/,
    ],
    [
      '408',
      async (s) => {
        s.on('GET', '/v1/jobs/e408', (_req, res) => sendErrors(res, 408, [{ code: 'timeout', message: 'slow' }]));
        return clientFor(s, { maxRetries: 0 }).client.getJob('e408');
      },
      /Try again; if it keeps happening, the service may be overloaded or the network slow\.$/,
    ],
    [
      '429 with Retry-After',
      async (s) => {
        s.on('GET', '/v1/jobs/e429', (_req, res) =>
          sendErrors(res, 429, [{ code: 'rate_limited', message: 'busy' }], { 'retry-after': '3600' }),
        );
        return clientFor(s).client.getJob('e429');
      },
      /It asked to wait 1 h\. Try again in 1 h\.$/,
    ],
    [
      '500',
      async (s) => {
        s.on('GET', '/v1/jobs/e500', (_req, res) => sendErrors(res, 500, [{ code: 'internal', message: 'broke' }]));
        return clientFor(s, { maxRetries: 0 }).client.getJob('e500');
      },
      /Try again in a moment; if it keeps failing, the service may be down\.$/,
    ],
    [
      '503 with Retry-After',
      async (s) => {
        s.on('GET', '/v1/jobs/e503', (_req, res) =>
          sendErrors(res, 503, [{ code: 'unavailable', message: 'later' }], { 'retry-after': '7200' }),
        );
        return clientFor(s).client.getJob('e503');
      },
      /Try again in 2 h; if it keeps failing, the service may be down\.$/,
    ],
    [
      'connection refused',
      async () => clientFor(closedUrl, { maxRetries: 0 }).client.getJob('refused'),
      /Check the service address, that the service is running, and your network or proxy settings\.$/,
    ],
    [
      'no answer within the request time',
      async (s) => {
        s.on('GET', '/v1/jobs/hang', () => undefined);
        return clientFor(s, { maxRetries: 0, requestTimeoutMs: 100 }).client.getJob('hang');
      },
      /Try again; if it keeps happening, the service may be overloaded or the network slow\.$/,
    ],
    [
      "the caller's deadline",
      async (s) => {
        s.on('GET', '/v1/jobs/slow', () => undefined);
        return clientFor(s).client.getJob('slow', { deadline: Date.now() + 100 });
      },
      /Nothing was lost on the service; try again later or allow more time\.$/,
    ],
    [
      'an answer that is not JSON',
      async (s) => {
        s.on('GET', '/v1/jobs/html', (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<html>');
        });
        return clientFor(s).client.getJob('html');
      },
      /Check that the service address points at an Article Audio job service, and try again\.$/,
    ],
  ];

  for (const [name, cause, advice] of cases) {
    it(`${name}: the message states facts, the notification adds the advice once`, async () => {
      const { error } = await rejectionOf(cause(server));
      assert.ok(error instanceof Error, String(error));
      assert.doesNotMatch(error.message, ADVICE, `src/api gave advice: ${error.message}`);
      const shown = plainMessage(`Could not do it: ${describeClientError(error).message}`);
      assert.match(shown, advice);
      assert.ok(shown.startsWith(`Could not do it: ${error.message.replace(/\.?$/, '')}`), shown);
      const said = sentences(shown);
      assert.equal(new Set(said).size, said.length, `a sentence is repeated: ${shown}`);
      const adviceSentences = said.filter((sentence) => ADVICE.test(sentence));
      assert.equal(adviceSentences.length, 1, `advice given ${adviceSentences.length} times: ${shown}`);
    });
  }
});
