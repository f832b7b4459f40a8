// Black-box: `article-audio convert` (node dist/cli.js convert) end to end, with its built-in engine and against a
// running `serve`, and its exit codes and messages for each kind of failure.
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../support/cli-run';
import { repoRoot, startEngineProcess } from '../support/engine-process';
import { type ArticleServer, startArticleServer } from '../support/article-server';
import { zipOf } from '../support/zip-file';
import { slideDeck } from '../support/pdf-layouts';

const FIXTURE = path.join(__dirname, 'fixtures', 'article.md');
/** A CLI run still going after this long hangs (it is killed, and its test fails). */
const KILL_AFTER_MS = 90_000;

function assertAudioAndTranscript(base: string): void {
  const mp3 = readFileSync(`${base}.mp3`);
  assert.ok(mp3.length > 2000, `${base}.mp3 has only ${mp3.length} bytes`);
  assert.ok(
    mp3.subarray(0, 3).toString('latin1') === 'ID3' || (mp3[0] === 0xff && ((mp3[1] ?? 0) & 0xe0) === 0xe0),
    'not an MP3',
  );
  const vtt = readFileSync(`${base}.vtt`, 'utf8');
  assert.match(vtt, /^WEBVTT/);
  assert.match(vtt, /(\d\d:)?\d\d:\d\d\.\d{3} --> (\d\d:)?\d\d:\d\d\.\d{3}/);
  assert.equal(existsSync(`${base}.mp3.part`), false, 'a partial download was left behind');
}

describe('article-audio convert', () => {
  let work: string;
  let pages: ArticleServer;
  before(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'aa-convert-'));
    pages = await startArticleServer();
  });
  after(async () => {
    rmSync(work, { recursive: true, force: true });
    await pages.close();
  });

  it('converts a Markdown file with the built-in engine: exit 0, the MP3 and the transcript beside it', async () => {
    const run = await runCli(
      ['convert', FIXTURE, '--model', 'article-audio-1-mini', '--out', path.join(work, 'river')],
      { killAfterMs: KILL_AFTER_MS },
    );
    assert.equal(run.code, 0, run.stderr);
    assertAudioAndTranscript(path.join(work, 'river'));
    assert.match(run.stdout, /^Wrote .*river\.mp3 and .*river\.vtt \(\d+:\d\d of audio\)\.\n$/);
    assert.match(run.stderr, /status: succeeded/);
    assert.match(run.stderr, /progress: 100%/);
    // A part of the audio announced early is not the whole: progress climbs before it reaches 100 %.
    const shown = [...run.stderr.matchAll(/progress: (\d+)%/g)].map((m) => Number(m[1]));
    assert.ok(
      shown.slice(0, shown.indexOf(100)).some((p) => p > 1 && p < 100),
      `progress went ${shown.join(', ')}`,
    );
  });

  it('reads standard input, and names the outputs after the input in the current folder by default', async () => {
    const run = await runCli(['convert', '-', '--model', 'article-audio-1-mini'], {
      stdin: readFileSync(FIXTURE, 'utf8'),
      cwd: work,
      killAfterMs: KILL_AFTER_MS,
    });
    assert.equal(run.code, 0, run.stderr);
    assertAudioAndTranscript(path.join(work, 'article'));
    assert.match(run.stdout, /Wrote article\.mp3 and article\.vtt/);
  });

  it('converts a web page and a saved HTML page', async () => {
    const page = await runCli(['convert', pages.articleUrl, '--model', 'article-audio-1-mini', '--out', `${work}/`], {
      killAfterMs: KILL_AFTER_MS,
    });
    assert.equal(page.code, 0, page.stderr);
    assertAudioAndTranscript(path.join(work, 'article'));
    const htmlFile = path.join(work, 'saved.html');
    writeFileSync(htmlFile, readFileSync(path.join(__dirname, 'fixtures', 'article.html')));
    const saved = await runCli(
      ['convert', htmlFile, '--model', 'article-audio-1-mini', '--out', path.join(work, 'saved.mp3')],
      { killAfterMs: KILL_AFTER_MS },
    );
    assert.equal(saved.code, 0, saved.stderr);
    assertAudioAndTranscript(path.join(work, 'saved'));
  });

  it('converts a PDF file: its text read by the command line, the slides in order, the footer left out', async () => {
    const deck = slideDeck();
    const file = path.join(work, 'quiet-machines.pdf');
    writeFileSync(file, deck.pdf);
    const run = await runCli(['convert', file, '--model', 'article-audio-1-mini', '--out', `${work}/`], {
      killAfterMs: KILL_AFTER_MS,
    });
    assert.equal(run.code, 0, run.stderr);
    assertAudioAndTranscript(path.join(work, 'quiet-machines'));
    // Without the word timestamps (`<00:00:01.234>`) between the words.
    const vtt = readFileSync(path.join(work, 'quiet-machines.vtt'), 'utf8')
      .replace(/<[^>]*>/g, '')
      .replace(/\s+/g, ' ');
    let at = 0;
    for (const sentence of deck.inOrder) {
      const found = vtt.indexOf(sentence, at);
      assert.ok(found >= 0, `"${sentence}" is missing or out of order in the transcript:\n${vtt}`);
      at = found;
    }
    assert.doesNotMatch(vtt, /Lisbon/);
  });

  it('converts through a running service with --base-url and ARTICLE_AUDIO_API_KEY', async () => {
    const engine = await startEngineProcess();
    try {
      const run = await runCli(
        [
          'convert',
          FIXTURE,
          '--model',
          'article-audio-1-mini',
          '--base-url',
          engine.url,
          '--out',
          path.join(work, 'remote.mp3'),
        ],
        {
          env: { ARTICLE_AUDIO_API_KEY: engine.tokens[0] as string },
          killAfterMs: KILL_AFTER_MS,
        },
      );
      assert.equal(run.code, 0, run.stderr);
      assertAudioAndTranscript(path.join(work, 'remote'));

      const refused = await runCli(
        ['convert', FIXTURE, '--base-url', engine.url, '--out', path.join(work, 'refused.mp3')],
        { env: { ARTICLE_AUDIO_API_KEY: 'not-the-key' }, killAfterMs: KILL_AFTER_MS },
      );
      assert.equal(refused.code, 3, refused.stderr);
      assert.match(refused.stderr, /ARTICLE_AUDIO_API_KEY/);
      assert.equal(existsSync(path.join(work, 'refused.mp3')), false);
    } finally {
      await engine.dispose();
    }
  });

  it('exits 2 with a clear message for unusable input and arguments', async () => {
    const short = path.join(work, 'short.txt');
    writeFileSync(short, 'Too short to read aloud.');
    // The first 4,000 bytes of the synthesizer's module (the whole is over the size limit), and a zip of an article.
    const wasm = path.join(work, 'head.wasm');
    writeFileSync(wasm, readFileSync(path.join(repoRoot, 'dist', 'flite.wasm')).subarray(0, 4000));
    const zip = path.join(work, 'notes.zip');
    writeFileSync(zip, zipOf({ 'notes.md': readFileSync(FIXTURE) }));
    const cases: [string[], RegExp, Record<string, string>?][] = [
      [['convert', path.join(work, 'missing.md')], /No such file: .*missing\.md/],
      [['convert', short], /has 24 characters of text; an article needs at least 50/],
      [['convert'], /Name the article/],
      [['convert', FIXTURE, 'second.md'], /one article at a time/],
      [['convert', FIXTURE, '--speed', '2'], /Unknown option --speed\. The options are --model, --out/],
      [['convert', FIXTURE, '--modle', 'pro'], /Unknown option --modle\. Did you mean --model\?/],
      [['convert', FIXTURE, '--intro', 'x'], /Unknown option --intro\. Did you mean --intro-url\?/],
      [
        ['convert', FIXTURE, '--model', 'gpt-4'],
        /--model must be one of article-audio-1-mini, article-audio-1-pro, article-podcast-1-pro/,
      ],
      [['convert', FIXTURE, '--intro-url', 'file:///x.mp3'], /--intro-url must be an http/],
      [['convert', 'ftp://example.com/a'], /Only http:\/\/ and https:\/\/ addresses/],
      [['convert', FIXTURE, '--out', path.join(work, 'no', 'such', 'dir', 'x.mp3')], /The folder .* does not exist/],
      [['convert', FIXTURE, '--base-url', 'http://127.0.0.1:9'], /Set ARTICLE_AUDIO_API_KEY/],
      [['frobnicate'], /Unknown command "frobnicate"/],
      // Files that are not text are refused before any work, saying what they look like.
      [['convert', path.join(repoRoot, 'media', 'icon.png')], /icon\.png looks like a PNG image, not text/],
      [['convert', wasm], /head\.wasm looks like a WebAssembly module, not text/],
      [['convert', zip], /notes\.zip looks like a ZIP archive/],
    ];
    for (const [args, message, env] of cases) {
      const run = await runCli(args, { env, killAfterMs: KILL_AFTER_MS });
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message, args.join(' '));
    }
  });

  it('exits 5 with the job error code when the job fails, and 4 when the service cannot be reached', async () => {
    const failed = await runCli(
      ['convert', pages.missingUrl, '--model', 'article-audio-1-mini', '--out', path.join(work, 'failed.mp3')],
      { killAfterMs: KILL_AFTER_MS },
    );
    assert.equal(failed.code, 5, failed.stderr);
    assert.match(failed.stderr, /the job failed \(fetch_failed\)/);
    const reason = /the job failed \(fetch_failed\): (.{20})/.exec(failed.stderr)?.[1] ?? 'no reason';
    assert.equal(`${failed.stdout}${failed.stderr}`.split(reason).length - 1, 1, 'the reason is said once');
    assert.equal(existsSync(path.join(work, 'failed.mp3')), false);

    const closedPort = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const unreachable = await runCli(
      ['convert', FIXTURE, '--base-url', `http://127.0.0.1:${closedPort}`, '--out', path.join(work, 'x.mp3')],
      { env: { ARTICLE_AUDIO_API_KEY: 'k' }, killAfterMs: KILL_AFTER_MS },
    );
    assert.equal(unreachable.code, 4, unreachable.stderr);
    assert.match(unreachable.stderr, /127\.0\.0\.1/);
  });

  it('prints help for every command', async () => {
    for (const args of [['--help'], ['help', 'convert'], ['convert', '--help'], ['serve', '--help']]) {
      const run = await runCli(args, { killAfterMs: KILL_AFTER_MS });
      assert.equal(run.code, 0, args.join(' '));
      assert.match(run.stdout, /^Usage: article-audio/);
    }
    assert.ok(statSync(path.join(repoRoot, 'dist', 'cli.js')).size > 0);
  });
});
