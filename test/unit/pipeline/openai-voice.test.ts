// The OpenAI-compatible voice against a provider on loopback that speaks the protocol (test/support/speech-provider.ts):
// the request as OpenAI takes it, audio decoded from WAV and raw PCM, 429/500/slow answers tried again (Retry-After
// honoured), an answer that is not audio refused, a provider that stays down failing `voice_unavailable` with its
// reason and never the key; and the voices file's checks.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { PipelineError } from '../../../src/speech/types';
import { OpenAiVoice } from '../../../src/speech/voice/openai-voice';
import { readVoicesFile, type OpenAiEntry } from '../../../src/speech/voice/voices-file';
import {
  PROVIDER_RATE,
  SECONDS_PER_CHARACTER,
  type SpeechProvider,
  startSpeechProvider,
} from '../../support/speech-provider';

const KEY = 'sk-test-0123456789abcdef-secret';
const FAST = { budgetMs: 4000, firstDelayMs: 50, maxDelayMs: 200 };

describe('OpenAI-compatible voice', () => {
  let provider: SpeechProvider;
  before(async () => {
    provider = await startSpeechProvider({ key: KEY });
  });
  after(() => provider.close());
  beforeEach(() => provider.reset());

  const voice = (extra: Partial<OpenAiEntry> = {}, policy = FAST) =>
    new OpenAiVoice({
      entry: { provider: 'openai', base_url: provider.baseUrl, model: 'kokoro', voice: 'af_heart', key: KEY, ...extra },
      voice: 'af_heart',
      modelId: 'article-audio-1-pro',
      policy,
    });
  const signal = () => new AbortController().signal;

  it('decodes an Ogg Opus answer (response_format opus) at its own 48 kHz', async () => {
    const spoken = await voice({ response_format: 'opus' }).speak({ text: 'Opus, please.' }, signal());
    assert.deepEqual(provider.refused, []);
    assert.equal(provider.requests[0]?.response_format, 'opus');
    assert.equal(spoken.sampleRate, 48_000);
    const seconds = spoken.samples.length / spoken.sampleRate;
    assert.ok(seconds > 1.8 && seconds < 2.2, `${seconds} s decoded from the 2 s file`);
    let energy = 0;
    for (const sample of spoken.samples) energy += Math.abs(sample);
    assert.ok(energy / spoken.samples.length > 0.001, 'the decoded audio is silent');
  });

  it('sends the request OpenAI takes and decodes the WAV it answers', async () => {
    const line = 'The quick brown fox jumps over the lazy dog.';
    const spoken = await voice({ speed: 1.1 }).speak({ text: line }, signal());
    assert.deepEqual(provider.refused, []);
    assert.equal(provider.requests.length, 1);
    assert.deepEqual(
      { ...provider.requests[0] },
      {
        model: 'kokoro',
        voice: 'af_heart',
        input: line,
        response_format: 'wav',
        speed: 1.1,
        authorization: `Bearer ${KEY}`,
      },
    );
    assert.equal(spoken.sampleRate, PROVIDER_RATE);
    assert.equal(spoken.samples.length, Math.round(line.length * SECONDS_PER_CHARACTER * PROVIDER_RATE));
    const peak = Math.max(...Array.from(spoken.samples, Math.abs));
    assert.ok(peak > 0.1 && peak <= 1, `peak ${peak}`);
  });

  it('decodes raw PCM (24 kHz, 16-bit) when asked for pcm', async () => {
    const spoken = await voice({ response_format: 'pcm' }).speak({ text: 'Hello there.' }, signal());
    assert.equal(provider.requests[0]!.response_format, 'pcm');
    assert.equal(spoken.sampleRate, 24_000);
    assert.ok(spoken.samples instanceof Int16Array);
    assert.equal(spoken.samples.length, Math.round('Hello there.'.length * SECONDS_PER_CHARACTER * PROVIDER_RATE));
  });

  it('waits as long as Retry-After asks on 429, then tries again', async () => {
    provider.fault = (_r, n) => (n === 0 ? { kind: 'status', status: 429, retryAfterS: 1 } : undefined);
    const started = Date.now();
    const spoken = await voice().speak({ text: 'Rate limited once.' }, signal());
    assert.ok(Date.now() - started >= 950, `tried again after ${Date.now() - started} ms`);
    assert.equal(provider.requests.length, 2);
    assert.ok(spoken.samples.length > 0);
  });

  it('tries a 500 again', async () => {
    provider.fault = (_r, n) => (n < 2 ? { kind: 'status', status: 500 } : undefined);
    await voice().speak({ text: 'Down twice.' }, signal());
    assert.equal(provider.requests.length, 3);
  });

  it('gives up on a first byte later than the timeout, and tries again', async () => {
    // The first answer would come after a minute: a voice that waited for it takes at least that long, one that gave
    // up after 0.4 s far less, however busy the machine.
    provider.fault = (_r, n) => (n === 0 ? { kind: 'slow', delayMs: 60_000 } : undefined);
    const started = Date.now();
    await voice({ timeout_s: 0.4 }).speak({ text: 'Slow once.' }, signal());
    assert.ok(Date.now() - started < 30_000, `took ${Date.now() - started} ms`);
    assert.equal(provider.requests.length, 2);
  });

  it('refuses an HTML page sent with 200, at once, without speaking it', async () => {
    provider.fault = () => ({ kind: 'html' });
    await assert.rejects(voice().speak({ text: 'A login page.' }, signal()), (error: unknown) => {
      assert.ok(error instanceof PipelineError);
      assert.equal(error.code, 'voice_unavailable');
      assert.match(error.message, /text\/html.*not audio/);
      return true;
    });
    assert.equal(provider.requests.length, 1, 'a page that is not audio is not asked for again');
  });

  it('fails voice_unavailable with the reason, redacted, when the provider stays down', async () => {
    provider.fault = () => ({ kind: 'status', status: 503, body: `overloaded (you sent Bearer ${KEY})` });
    await assert.rejects(
      voice({}, { budgetMs: 600, firstDelayMs: 50, maxDelayMs: 100 }).speak({ text: 'Down.' }, signal()),
      (error: unknown) => {
        assert.ok(error instanceof PipelineError);
        assert.equal(error.code, 'voice_unavailable');
        assert.match(error.message, /HTTP 503: overloaded/);
        assert.match(error.message, /remove "article-audio-1-pro" from the voices file/);
        assert.ok(!error.message.includes(KEY), error.message);
        return true;
      },
    );
    assert.ok(provider.requests.length >= 2);
  });

  it('fails at once on a refused key, without the key in the message', async () => {
    await assert.rejects(voice({ key: 'sk-wrong-key-42' }).speak({ text: 'Who am I?' }, signal()), (error: unknown) => {
      assert.ok(error instanceof PipelineError && error.code === 'voice_unavailable');
      assert.match(error.message, /HTTP 401/);
      assert.ok(!error.message.includes('sk-wrong-key-42'), error.message);
      return true;
    });
    assert.equal(provider.refused.length, 1);
  });
});

describe('voices file', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'voices-file-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (json: unknown) => {
    const file = path.join(dir, `v${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, typeof json === 'string' ? json : JSON.stringify(json));
    return file;
  };
  const pro = { provider: 'openai', base_url: 'http://127.0.0.1:8880/v1', model: 'kokoro', voice: 'af_heart' };

  it('reads an entry and takes its key from the variable it names', () => {
    const file = write({ 'article-audio-1-pro': { ...pro, key_env: 'VOICE_API_KEY' } });
    const config = readVoicesFile(file, { VOICE_API_KEY: KEY });
    assert.equal(config['article-audio-1-pro']?.key, KEY);
    assert.equal(config['article-audio-1-mini'], undefined);
  });

  it('names the file and the field of a mistake', () => {
    const cases: [unknown, RegExp][] = [
      [{ 'article-audio-1-pro': { ...pro, base_url: 'ftp://x' } }, /article-audio-1-pro\.base_url: must be an http/],
      [{ 'article-audio-1-pro': { ...pro, voice: undefined } }, /article-audio-1-pro: needs "voice"/],
      [{ 'article-audio-1-pro': { ...pro, api_key: 'sk-in-the-file' } }, /article-audio-1-pro: .*api_key/],
      [
        { 'article-audio-1-pro': { ...pro, provider: 'azure' } },
        /article-audio-1-pro\.provider: provider must be "openai" \(an OpenAI-compatible speech API\) or "elevenlabs"/,
      ],
      [{ 'article-audio-9': pro }, /"article-audio-9" is not a model/],
      ['{not json', /is not JSON/],
    ];
    for (const [json, expected] of cases) {
      const file = write(json);
      assert.throws(
        () => readVoicesFile(file, {}),
        (error: Error) => {
          assert.ok(error.message.includes(file), error.message);
          assert.match(error.message, expected);
          assert.ok(!error.message.includes('sk-in-the-file'), error.message);
          return true;
        },
      );
    }
  });

  it('refuses an entry whose key variable is not set', () => {
    const file = write({ 'article-audio-1-pro': { ...pro, key_env: 'VOICE_API_KEY' } });
    assert.throws(
      () => readVoicesFile(file, {}),
      /article-audio-1-pro\.key_env: the environment variable VOICE_API_KEY is not set/,
    );
  });
});
