// Black-box: `article-audio convert` on articles in German, French and Spanish fails `unsupported_language`, naming
// the language, when the built-in (English) voices would read them; English articles (one quoting German, one full
// of code) still convert; with a provider voice (test/support/speech-provider.ts) the German article converts and
// its transcript and ID3 tag carry the language.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import NodeID3 from 'node-id3';
import { runCli } from '../support/cli-run';
import { type SpeechProvider, startSpeechProvider } from '../support/speech-provider';

const FIXTURES = path.join(__dirname, 'fixtures', 'languages');
const KEY = 'sk-language-test-key-1234';
const MODEL = 'article-audio-1-pro';

describe('articles in other languages', () => {
  let work: string;
  before(() => {
    work = mkdtempSync(path.join(os.tmpdir(), 'languages-'));
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  for (const [file, name] of [
    ['de.md', 'German'],
    ['fr.md', 'French'],
    ['es.md', 'Spanish'],
  ] as const) {
    it(`refuses ${name} with the built-in voices: unsupported_language, naming it`, { timeout: 120_000 }, async () => {
      const out = path.join(work, `${file}.mp3`);
      const run = await runCli(['convert', path.join(FIXTURES, file), '--out', out], { cwd: work });
      assert.notEqual(run.code, 0, run.stderr);
      assert.match(
        run.stderr,
        new RegExp(
          `the job failed \\(unsupported_language\\): This article is in ${name}; the built-in voices read English only\\. Read it with a speech provider voice that speaks ${name}`,
        ),
      );
      assert.throws(() => readFileSync(out), 'no audio was written');
    });
  }

  for (const file of ['en-quote.md', 'en-code.md']) {
    it(`converts English (${file}) with the built-in voices`, { timeout: 180_000 }, async () => {
      const out = path.join(work, `${file}.mp3`);
      const run = await runCli(['convert', path.join(FIXTURES, file), '--out', out], { cwd: work });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /The article is in English \(en;/);
      const vtt = readFileSync(out.replace(/\.mp3$/, '.vtt'), 'utf8');
      assert.match(vtt, /^WEBVTT[^\n]*\n\nNOTE voice: [^\n]+\n\nNOTE language: en\n\n/);
      assert.equal(NodeID3.read(readFileSync(out)).language, 'eng');
    });
  }

  describe('with a provider voice', () => {
    let provider: SpeechProvider;
    before(async () => {
      provider = await startSpeechProvider({ key: KEY });
    });
    after(async () => {
      await provider.close();
    });

    it('reads German, and says which language it detected', { timeout: 120_000 }, async () => {
      const voices = path.join(work, 'voices.json');
      writeFileSync(
        voices,
        JSON.stringify({
          [MODEL]: {
            provider: 'openai',
            base_url: provider.baseUrl,
            model: 'kokoro',
            voice: 'af_heart',
            key_env: 'VOICE_API_KEY',
          },
        }),
      );
      const out = path.join(work, 'de-provider.mp3');
      const run = await runCli(['convert', path.join(FIXTURES, 'de.md'), '--voices', voices, '--out', out], {
        env: { VOICE_API_KEY: KEY },
        cwd: work,
      });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /The article is in German \(de;/);
      assert.ok(
        provider.requests.some((r) => r.input.includes('Brücke')),
        'the provider read the German text',
      );
      const vtt = readFileSync(out.replace(/\.mp3$/, '.vtt'), 'utf8');
      assert.match(vtt, /^WEBVTT[^\n]*\n\nNOTE voice: [^\n]+\n\nNOTE language: de\n\n/);
      assert.equal(NodeID3.read(readFileSync(out)).language, 'deu');
    });
  });
});
