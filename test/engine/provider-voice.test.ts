// Black-box: `article-audio convert doc.md --voices voices.json` reads with an OpenAI-compatible speech provider
// (test/support/speech-provider.ts, on loopback): an MP3 and a transcript whose cues are the provider's lines, each
// line asked for once, the key in no output, log or file the run wrote; a provider that stays down fails the job
// `voice_unavailable` with what to do; a voices file whose key variable is unset is refused before anything runs.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import NodeID3 from 'node-id3';
import { runCli } from '../support/cli-run';
import { checkMp3 } from '../support/mp3-check';
import { type ElevenLabsProvider, startElevenLabs } from '../support/elevenlabs-provider';
import { SECONDS_PER_CHARACTER, type SpeechProvider, startSpeechProvider } from '../support/speech-provider';

const FIXTURE = path.join(__dirname, 'fixtures', 'article.md');
const KEY = 'sk-provider-key-7f3a9c1e5b2d';
const MODEL = 'article-audio-1-pro';

function cueDurations(vtt: string): { text: string; seconds: number }[] {
  const time = (t: string) => t.split(':').reduce((s, part) => s * 60 + Number(part), 0);
  const cues: { text: string; seconds: number }[] = [];
  const pattern = /^([\d:.]+) --> ([\d:.]+)\n(.+)$/gm;
  for (let m; (m = pattern.exec(vtt));) cues.push({ text: m[3]!, seconds: time(m[2]!) - time(m[1]!) });
  return cues;
}

/** Every file under `dir`, as bytes. */
function everyFile(dir: string): { file: string; bytes: Buffer }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const file = path.join(e.parentPath, e.name);
      return { file, bytes: readFileSync(file) };
    });
}

describe('convert --voices with an OpenAI-compatible provider', () => {
  let provider: SpeechProvider;
  let work: string;
  before(async () => {
    provider = await startSpeechProvider({ key: KEY });
  });
  after(async () => {
    await provider.close();
  });
  beforeEach(() => {
    provider.reset();
    work = mkdtempSync(path.join(os.tmpdir(), 'provider-voice-'));
  });
  const voicesFile = (extra: Record<string, unknown> = {}) => {
    const file = path.join(work, 'voices.json');
    writeFileSync(
      file,
      JSON.stringify({
        [MODEL]: {
          provider: 'openai',
          base_url: provider.baseUrl,
          model: 'kokoro',
          voice: 'af_heart',
          key_env: 'VOICE_API_KEY',
          ...extra,
        },
      }),
    );
    return file;
  };

  it(
    'reads every line with the provider once; the cues are its lines; the key is nowhere',
    { timeout: 120_000 },
    async () => {
      const out = path.join(work, 'out.mp3');
      const run = await runCli(['convert', FIXTURE, '--voices', voicesFile(), '--out', out], {
        env: { VOICE_API_KEY: KEY },
        cwd: work,
      });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(provider.refused, []);
      assert.match(run.stderr, /Reading with the voice af_heart \(kokoro at 127\.0\.0\.1:\d+/);
      const mp3 = readFileSync(out);
      assert.ok(mp3.subarray(0, 3).toString('latin1') === 'ID3' && mp3.length > 5000, 'an MP3 with its tag');
      // A neural voice keeps its highs: the stream is at 24 kHz (the built-in voices' is 16 kHz).
      assert.equal((await checkMp3(mp3)).sampleRate, 24_000);
      // Who read it: a NOTE after the transcript's header and a TXXX "Voice" frame in the tag (host only, no key).
      const vtt = readFileSync(path.join(work, 'out.vtt'), 'utf8');
      const readBy = /^the voice af_heart \(kokoro at 127\.0\.0\.1:\d+, an OpenAI-compatible speech API\)$/;
      const note = /^WEBVTT[^\n]*\n\nNOTE voice: (.+)\n\n/.exec(vtt);
      assert.ok(note, vtt.slice(0, 300));
      assert.match(note[1]!, readBy);
      // The provider gives no word timings: its cues are the sentences alone, without cue timestamps.
      assert.doesNotMatch(vtt, /<\d\d:\d\d/);
      const voiceFrames = NodeID3.read(mp3).userDefinedText?.filter((frame) => frame.description === 'Voice');
      assert.equal(voiceFrames?.length, 1, 'one TXXX "Voice" frame');
      assert.match(voiceFrames[0]!.value, readBy);
      const cues = cueDurations(vtt);
      const inputs = provider.requests.map((r) => r.input);
      // Each line once: as many requests as cues, no line asked for twice.
      assert.equal(inputs.length, cues.length, inputs.join('\n'));
      assert.equal(new Set(inputs).size, inputs.length, 'a line was asked for twice');
      for (const r of provider.requests)
        assert.deepEqual([r.model, r.voice, r.response_format], ['kokoro', 'af_heart', 'wav']);
      // The cues are the provider's audio: each lasts what the provider said for a line (60 ms a character), resampled
      // into the stream without a change of length.
      const said = inputs.map((input) => input.length * SECONDS_PER_CHARACTER).sort((a, b) => a - b);
      const heard = cues.map((c) => c.seconds).sort((a, b) => a - b);
      heard.forEach((seconds, i) =>
        assert.ok(Math.abs(seconds - said[i]!) < 0.05, `cue of ${seconds} s, line of ${said[i]} s`),
      );
      // Lines said as written are sent as written (the rest differ by their spoken form: "Section one: …", "1990").
      assert.ok(inputs.includes('The river town woke early.'));
      assert.ok(cues.some((c) => c.text === 'The river town woke early.'));
      for (const { file, bytes } of everyFile(work)) assert.ok(!bytes.includes(KEY), `the key is in ${file}`);
      assert.ok(!run.stdout.includes(KEY) && !run.stderr.includes(KEY), 'the key was printed');
      rmSync(work, { recursive: true, force: true });
    },
  );

  it('fails voice_unavailable, with what to do, when the provider stays down', { timeout: 120_000 }, async () => {
    provider.fault = () => ({ kind: 'status', status: 503, body: `upstream down; got Bearer ${KEY}` });
    const run = await runCli(
      ['convert', FIXTURE, '--voices', voicesFile({ retry_s: 1 }), '--out', path.join(work, 'out.mp3')],
      { env: { VOICE_API_KEY: KEY }, cwd: work },
    );
    assert.equal(run.code, 5, run.stderr);
    assert.match(
      run.stderr,
      /the job failed \(voice_unavailable\): The voice af_heart at 127\.0\.0\.1:\d+ could not read the article: it answered HTTP 503: upstream down/,
    );
    assert.match(run.stderr, new RegExp(`remove "${MODEL}" from the voices file`));
    assert.ok(provider.requests.length >= 2, 'a 503 is tried again');
    assert.ok(!run.stdout.includes(KEY) && !run.stderr.includes(KEY), 'the key was printed');
    for (const { file, bytes } of everyFile(work)) assert.ok(!bytes.includes(KEY), `the key is in ${file}`);
    rmSync(work, { recursive: true, force: true });
  });

  it(
    "refuses an article longer than the entry's max_characters before any request, naming the cap and the file",
    { timeout: 60_000 },
    async () => {
      const file = voicesFile({ max_characters: 200 });
      const run = await runCli(['convert', FIXTURE, '--voices', file, '--out', path.join(work, 'out.mp3')], {
        env: { VOICE_API_KEY: KEY },
        cwd: work,
      });
      assert.equal(run.code, 5, run.stderr);
      assert.match(
        run.stderr,
        /the job failed \(too_long\): The article has [\d,]+ characters; the voice af_heart \(kokoro at 127\.0\.0\.1:\d+, an OpenAI-compatible speech API\) reads at most 200 a job \(max_characters of "article-audio-1-pro" in the voices file /,
      );
      assert.ok(run.stderr.includes(file), run.stderr);
      assert.equal(provider.requests.length, 0, 'a request reached the provider');
      assert.ok(!run.stdout.includes(KEY) && !run.stderr.includes(KEY), 'the key was printed');
      // Within the cap, it reads as before.
      const within = await runCli(
        ['convert', FIXTURE, '--voices', voicesFile({ max_characters: 100_000 }), '--out', path.join(work, 'ok.mp3')],
        { env: { VOICE_API_KEY: KEY }, cwd: work },
      );
      assert.equal(within.code, 0, within.stderr);
      assert.ok(provider.requests.length > 0);
      rmSync(work, { recursive: true, force: true });
    },
  );

  it(
    'a provider that asks to wait (429 with Retry-After) is tried again, and the job log says so',
    { timeout: 120_000 },
    async () => {
      provider.fault = (_request, n) =>
        n < 2 ? { kind: 'status', status: 429, retryAfterS: 0.3, body: 'slow down' } : undefined;
      const run = await runCli(['convert', FIXTURE, '--voices', voicesFile(), '--out', path.join(work, 'out.mp3')], {
        env: { VOICE_API_KEY: KEY },
        cwd: work,
      });
      assert.equal(run.code, 0, run.stderr);
      assert.match(
        run.stderr,
        /The voice at 127\.0\.0\.1:\d+ answered HTTP 429: .*slow down.*; trying again in \d+\.\d s\./,
      );
      rmSync(work, { recursive: true, force: true });
    },
  );

  it(
    'refuses a voices file whose key variable is not set, naming the file and the field',
    { timeout: 60_000 },
    async () => {
      const file = voicesFile();
      const run = await runCli(['convert', FIXTURE, '--voices', file, '--out', path.join(work, 'out.mp3')], {
        cwd: work,
      });
      assert.equal(run.code, 2, run.stderr);
      assert.ok(run.stderr.includes(file), run.stderr);
      assert.match(run.stderr, /article-audio-1-pro\.key_env: the environment variable VOICE_API_KEY is not set/);
      assert.equal(provider.requests.length, 0);
      rmSync(work, { recursive: true, force: true });
    },
  );
});

describe('convert --voices with ElevenLabs', () => {
  let eleven: ElevenLabsProvider;
  before(async () => {
    eleven = await startElevenLabs({ key: KEY });
  });
  after(async () => {
    await eleven.close();
  });

  it(
    'reads every line with the ElevenLabs voice; the podcast with one voice per host; the key is nowhere',
    { timeout: 180_000 },
    async () => {
      const work = mkdtempSync(path.join(os.tmpdir(), 'elevenlabs-voice-'));
      const file = path.join(work, 'voices.json');
      const entry = { provider: 'elevenlabs', base_url: eleven.baseUrl, key_env: 'XI_API_KEY' };
      writeFileSync(
        file,
        JSON.stringify({
          [MODEL]: { ...entry, voice: 'voice-pro-1' },
          'article-podcast-1-pro': { ...entry, voices: ['host-a-voice', 'host-b-voice'] },
        }),
      );
      const out = path.join(work, 'out.mp3');
      const run = await runCli(['convert', FIXTURE, '--voices', file, '--out', out], {
        env: { XI_API_KEY: KEY },
        cwd: work,
      });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(eleven.refused, []);
      const vtt = readFileSync(path.join(work, 'out.vtt'), 'utf8');
      assert.match(vtt, /NOTE voice: the voice voice-pro-1 \(eleven_multilingual_v2 at 127\.0\.0\.1:\d+, ElevenLabs\)/);
      // Its character timings become word timestamps in the transcript (issue 26), as the built-in voices' do.
      assert.match(vtt, /\n[^\n<]+ <\d\d:\d\d:\d\d\.\d{3}>\S/, 'word timestamps from the character timings');
      const cues = cueDurations(vtt);
      assert.equal(eleven.requests.length, cues.length, 'one request per line');
      assert.ok(eleven.requests.every((r) => r.voiceId === 'voice-pro-1' && r.key === KEY));

      // The podcast: its two hosts read with the two voices of the file.
      eleven.reset();
      const podcast = await runCli(
        [
          'convert',
          FIXTURE,
          '--voices',
          file,
          '--model',
          'article-podcast-1-pro',
          '--out',
          path.join(work, 'show.mp3'),
        ],
        { env: { XI_API_KEY: KEY }, cwd: work },
      );
      assert.equal(podcast.code, 0, podcast.stderr);
      assert.deepEqual(
        [...new Set(eleven.requests.map((r) => r.voiceId))].sort(),
        ['host-a-voice', 'host-b-voice'],
        'each host reads with its own voice',
      );
      for (const { file: written, bytes } of everyFile(work))
        assert.ok(!bytes.includes(KEY), `the key is in ${written}`);
      for (const r of [run, podcast])
        assert.ok(!r.stdout.includes(KEY) && !r.stderr.includes(KEY), 'the key was printed');
      rmSync(work, { recursive: true, force: true });
    },
  );
});
