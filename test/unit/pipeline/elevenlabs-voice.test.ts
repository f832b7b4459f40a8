// The ElevenLabs voice against a real HTTP server on loopback that speaks ElevenLabs' protocol
// (test/support/elevenlabs-provider.ts): the request it takes, the audio decoded at the format's rate, the character
// timings turned into word timings, and each fault: a refused key (no retry, key redacted), 429 with Retry-After
// (tried again), an HTML page or JSON without audio with status 200 (refused, never spoken), a body cut short.
import * as assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ElevenLabsVoice, wordsOf } from '../../../src/speech/voice/elevenlabs-voice';
import type { ElevenLabsEntry } from '../../../src/speech/voice/voices-file';
import { parseVoices } from '../../../src/speech/voice/voices-file';
import { PipelineError } from '../../../src/speech/types';
import {
  alignmentFor,
  type ElevenLabsProvider,
  SECONDS_PER_CHARACTER,
  startElevenLabs,
} from '../../support/elevenlabs-provider';

const KEY = 'xi-test-key-5c1d9e0f7a3b-secret';
const FAST = { budgetMs: 4000, firstDelayMs: 50, maxDelayMs: 200 };
const VOICE_ID = '21m00Tcm4TlvDq8ikWAM';

describe('ElevenLabs voice', () => {
  let provider: ElevenLabsProvider;
  before(async () => {
    provider = await startElevenLabs({ key: KEY });
  });
  after(() => provider.close());
  beforeEach(() => provider.reset());

  const voice = (extra: Partial<ElevenLabsEntry> = {}, policy = FAST) =>
    new ElevenLabsVoice({
      entry: { provider: 'elevenlabs', base_url: provider.baseUrl, voice: VOICE_ID, key: KEY, ...extra },
      voice: VOICE_ID,
      modelId: 'article-audio-1-pro',
      policy,
    });
  const signal = () => new AbortController().signal;

  it('sends the request ElevenLabs takes; the audio at the format rate, and a timing for every word', async () => {
    const line = 'The quick brown fox jumps over the lazy dog.';
    const spoken = await voice({ model: 'eleven_turbo_v2_5', output_format: 'pcm_22050' }).speak(
      { text: line },
      signal(),
    );
    assert.deepEqual(provider.refused, []);
    assert.deepEqual(provider.requests, [
      { voiceId: VOICE_ID, text: line, modelId: 'eleven_turbo_v2_5', outputFormat: 'pcm_22050', key: KEY },
    ]);
    assert.equal(spoken.sampleRate, 22_050);
    assert.equal(spoken.samples.length, Math.round(line.length * SECONDS_PER_CHARACTER * 22_050));
    assert.deepEqual(
      spoken.words?.map((w) => w.word),
      ['The', 'quick', 'brown', 'fox', 'jumps', 'over', 'the', 'lazy', 'dog.'],
    );
    const quick = spoken.words?.[1];
    assert.ok(quick);
    assert.equal(quick.start, Number((4 * SECONDS_PER_CHARACTER).toFixed(3)));
    assert.equal(quick.end, Number((9 * SECONDS_PER_CHARACTER).toFixed(3)));
    for (let i = 1; i < (spoken.words?.length ?? 0); i++)
      assert.ok(spoken.words[i]!.start >= spoken.words[i - 1]!.end, 'words in order');
  });

  it('uses its defaults: the model eleven_multilingual_v2 and 16 kHz PCM', async () => {
    const spoken = await voice().speak({ text: 'Hello there.' }, signal());
    assert.equal(provider.requests[0]?.modelId, 'eleven_multilingual_v2');
    assert.equal(provider.requests[0]?.outputFormat, 'pcm_16000');
    assert.equal(spoken.sampleRate, 16_000);
  });

  it('a refused key fails at once as voice_unavailable, the key redacted', async () => {
    const refused = new ElevenLabsVoice({
      entry: { provider: 'elevenlabs', base_url: provider.baseUrl, voice: VOICE_ID, key: 'wrong-key-material' },
      voice: VOICE_ID,
      modelId: 'article-audio-1-pro',
      policy: FAST,
    });
    await assert.rejects(refused.speak({ text: 'Hello.' }, signal()), (error: unknown) => {
      assert.ok(error instanceof PipelineError);
      assert.equal(error.code, 'voice_unavailable');
      assert.match(error.message, /answered HTTP 401: invalid_api_key: Invalid API key/);
      assert.ok(!error.message.includes('wrong-key-material'));
      return true;
    });
    assert.equal(provider.refused.length, 1, 'a refused key is not tried again');
  });

  it('429 with Retry-After is tried again after the wait; 500 too', async () => {
    provider.fault = (_request, n) =>
      n === 0
        ? {
            kind: 'status',
            status: 429,
            retryAfterS: 0.2,
            detail: { status: 'too_many_concurrent_requests', message: 'busy' },
          }
        : n === 1
          ? { kind: 'status', status: 500 }
          : undefined;
    const started = Date.now();
    const spoken = await voice().speak({ text: 'Patience pays.' }, signal());
    assert.equal(provider.requests.length, 3);
    assert.ok(Date.now() - started >= 200, 'the Retry-After was not honoured');
    assert.ok(spoken.samples.length > 0);
  });

  for (const [name, kind, pattern] of [
    ['an HTML page with status 200', 'html', /not JSON/],
    ['JSON without audio', 'no-audio', /without audio/],
  ] as const) {
    it(`${name} is refused, never spoken`, async () => {
      provider.fault = () => ({ kind });
      await assert.rejects(voice().speak({ text: 'Refuse this.' }, signal()), (error: unknown) => {
        assert.ok(error instanceof PipelineError);
        assert.match(error.message, pattern);
        return true;
      });
      assert.equal(provider.requests.length, 1, 'an answer that is not audio is not tried again');
    });
  }

  it('a body cut short is tried again', async () => {
    provider.fault = (_request, n) => (n === 0 ? { kind: 'truncated' } : undefined);
    const spoken = await voice().speak({ text: 'Once more, please.' }, signal());
    assert.equal(provider.requests.length, 2);
    assert.ok(spoken.words && spoken.words.length === 3);
  });

  it('character timings become words: spaces split them, times never go backwards', () => {
    assert.deepEqual(wordsOf(alignmentFor('a  bc')), [
      { word: 'a', start: 0, end: 0.06 },
      { word: 'bc', start: 0.18, end: 0.3 },
    ]);
    assert.deepEqual(
      wordsOf({
        characters: ['x', ' ', 'y'],
        character_start_times_seconds: [0.5, 0.6, 0.2],
        character_end_times_seconds: [0.6, 0.7, 0.3],
      }),
      [
        { word: 'x', start: 0.5, end: 0.6 },
        { word: 'y', start: 0.6, end: 0.6 },
      ],
    );
  });

  it('the voices file takes an ElevenLabs entry and checks it', () => {
    const config = parseVoices(
      {
        'article-audio-1-pro': {
          provider: 'elevenlabs',
          voice: VOICE_ID,
          key_env: 'XI_KEY',
          output_format: 'pcm_24000',
        },
      },
      'voices.json',
      { XI_KEY: KEY },
    );
    assert.equal(config['article-audio-1-pro']?.provider, 'elevenlabs');
    assert.equal(config['article-audio-1-pro']?.key, KEY);
    assert.throws(
      () =>
        parseVoices(
          { 'article-audio-1-pro': { provider: 'elevenlabs', voice: 'x', output_format: 'wav' } },
          'v.json',
          {},
        ),
      /article-audio-1-pro\.output_format/,
    );
    assert.throws(
      () => parseVoices({ 'article-audio-1-pro': { provider: 'elevenlabs' } }, 'v.json', {}),
      /needs "voice"/,
    );
  });
});
