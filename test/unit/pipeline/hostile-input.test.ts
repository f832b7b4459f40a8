// The pieces that keep hostile input off the engine's main thread and out of its memory: the nesting scans run
// before parsing, the intro/outro probe that bounds rate and length before decoding, the streamed resampler, and
// the parse worker's own limits (time, memory), each against inputs generated here.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createSpeechPipeline } from '../../../src/speech';
import { ClipProblem, checkClip, decodeClip, probeClip } from '../../../src/speech/audio/clip';
import { Mp3Writer } from '../../../src/speech/audio/mp3-writer';
import { htmlNestingDepth, markdownNestingDepth } from '../../../src/speech/source/nesting';
import { DEFAULT_PARSE_LIMITS, ParseRunner } from '../../../src/speech/parse/parse-runner';
import { StreamResampler, resample } from '../../../src/speech/audio/resample';
import { PipelineError, storageFailure } from '../../../src/speech/types';
import { checkSubmission } from '../../../src/engine/core/submission';
import { countCharacters } from '../../../src/protocol';
import { TONE_660_HZ_OGG } from '../../support/ogg-tone';
import { FETCH_LIMITS } from '../../support/speech-support';

const repo = path.resolve(__dirname, '..', '..', '..');

function wav(rate: number, seconds: number, channels = 1): Uint8Array {
  const frames = Math.round(rate * seconds);
  const dataBytes = frames * channels * 2;
  const out = Buffer.alloc(44 + dataBytes);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + dataBytes, 4);
  out.write('WAVEfmt ', 8, 'ascii');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(channels, 22);
  out.writeUInt32LE(rate, 24);
  out.writeUInt32LE(rate * channels * 2, 28);
  out.writeUInt16LE(channels * 2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < frames; i++) {
    const value = Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 12000);
    for (let c = 0; c < channels; c++) out.writeInt16LE(value, 44 + (i * channels + c) * 2);
  }
  return out;
}

describe('nesting scans before parsing', () => {
  it('real pages of the extraction fixtures are far below the bound; nested markup 40,000 deep is above it', () => {
    const dir = path.join(repo, 'test/fixtures/pages');
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.html'))) {
      const depth = htmlNestingDepth(readFileSync(path.join(dir, name), 'utf8'));
      assert.ok(depth > 0 && depth < DEFAULT_PARSE_LIMITS.maxHtmlDepth / 4, `${name}: ${depth}`);
    }
    assert.ok(htmlNestingDepth('<div>'.repeat(40_000), 400) > 400);
    assert.ok(htmlNestingDepth('<ul><li>'.repeat(40_000), 400) > 400);
  });

  it('counts what a parser nests, not what it closes by itself or never parses', () => {
    assert.equal(htmlNestingDepth('<div><p>a<p>b<p>c</div>'), 1, 'unclosed <p> are siblings');
    assert.equal(htmlNestingDepth('<ul><li>a<li>b<li>c</ul><ul><li>d</ul>'), 1);
    assert.equal(htmlNestingDepth('<div><span></div>'.repeat(1000)), 2, 'an end tag closes what it encloses');
    assert.equal(htmlNestingDepth('<div></span></b></div>'.repeat(1000)), 1, 'stray end tags change nothing');
    assert.equal(
      htmlNestingDepth(`<script>${'<div>'.repeat(1000)}</script><style>${'<div>'.repeat(1000)}</style><div></div>`),
      1,
    );
    assert.equal(htmlNestingDepth(`<!-- ${'<div>'.repeat(1000)} --><br><img src=x><hr>`), 0);
    assert.equal(htmlNestingDepth('<DIV><Section>x</section></div>'), 2);
    assert.equal(htmlNestingDepth('just text < 3 and > 2'), 0);
  });

  it('Markdown: quotes and lists by their markers and indentation; code blocks do not count', () => {
    assert.equal(markdownNestingDepth('# Title\n\nA paragraph.\n\n> a quote\n> > nested\n\n- a\n  - b\n    - c'), 3);
    assert.equal(markdownNestingDepth('> - > 1. item'), 4);
    assert.ok(markdownNestingDepth(`${'>'.repeat(5000)} deep`, 100) > 100);
    assert.ok(
      markdownNestingDepth(Array.from({ length: 300 }, (_, i) => `${'  '.repeat(i)}- item`).join('\n'), 100) > 100,
    );
    const code = `\`\`\`lisp\n${Array.from({ length: 50 }, (_, i) => `${' '.repeat(i * 8)}(- x)`).join('\n')}\n\`\`\`\nAfter.`;
    assert.equal(markdownNestingDepth(code), 0, 'indented code inside a fence');
    assert.equal(markdownNestingDepth('-'.repeat(1000)), 0, 'a run of dashes is no list');
  });
});

describe('intro and outro: bounded before decoding', () => {
  it('reads rate, channels and length from WAV, MP3 and OGG headers', async () => {
    const w = probeClip(wav(22_050, 1.5, 2));
    assert.deepEqual([w.format, w.sampleRate, w.channels, Math.round(w.seconds * 10) / 10], ['wav', 22_050, 2, 1.5]);
    const file = path.join(os.tmpdir(), `aa-probe-${process.pid}.mp3`);
    const writer = await Mp3Writer.create(file, 24_000, 64_000);
    await writer.write(new Float32Array(24_000 * 2).map((_, i) => Math.sin(i / 10) * 0.3));
    await writer.finish();
    const mp3 = probeClip(readFileSync(file));
    rmSync(file);
    assert.equal(mp3.format, 'mp3');
    assert.equal(mp3.sampleRate, 24_000);
    assert.ok(Math.abs(mp3.seconds - 2) < 0.2, `MP3 length ${mp3.seconds}`);
    const ogg = probeClip(TONE_660_HZ_OGG);
    assert.equal(ogg.format, 'ogg');
    assert.ok(Math.abs(ogg.seconds - 1) < 0.1, `OGG length ${ogg.seconds}`);
  });

  it('refuses low and absurd sample rates and clips past the length limit, naming the figure', () => {
    for (const rate of [1000, 150, 1_000_000]) {
      assert.throws(
        () => checkClip(probeClip(wav(rate, 0.5)), { maxSeconds: 180 }),
        (e: Error) => e instanceof ClipProblem && e.message.includes(`${rate.toLocaleString('en-US')} Hz`),
      );
    }
    assert.throws(
      () => checkClip({ format: 'wav', sampleRate: 8000, channels: 1, seconds: 200 }, { maxSeconds: 180 }),
      /3 min 20 s long; an intro or outro may be at most 3 min/,
    );
    // A data chunk that claims 4 GB counts only the bytes that are there.
    const liar = Buffer.from(wav(48_000, 1));
    liar.writeUInt32LE(0xfffffff0, 40);
    assert.ok(Math.abs(probeClip(liar).seconds - 1) < 0.01);
  });

  it('decodes in chunks to the target rate, the same as resampling the whole clip at once', async () => {
    const source = wav(44_100, 1.2, 2);
    const streamed = await decodeClip(source, 16_000, { maxSeconds: 10 });
    assert.ok(Math.abs(streamed.length - 1.2 * 16_000) < 64, `${streamed.length} samples`);
    const whole = new Float32Array(Math.round(44_100 * 1.2));
    for (let i = 0; i < whole.length; i++) whole[i] = Buffer.from(source).readInt16LE(44 + i * 4) / 32768;
    const reference = await resample(whole, 44_100, 16_000);
    const n = Math.min(reference.length, streamed.length);
    let diff = 0;
    for (let i = 0; i < n; i++) diff = Math.max(diff, Math.abs(reference[i]! - streamed[i]!));
    assert.ok(diff < 1e-4, `largest difference ${diff}`);
  });

  it('a streamed resampler gives out what it is fed, chunk by chunk', async () => {
    const resampler = await StreamResampler.create(48_000, 16_000);
    let total = 0;
    try {
      for (let i = 0; i < 10; i++) total += resampler.push(new Float32Array(4800).fill(0.1)).length;
      total += resampler.end().length;
    } finally {
      resampler.close();
    }
    assert.ok(total >= 16_000 && total < 16_000 + 200, `${total} samples out of 1 s`);
  });
});

describe('the parse worker', () => {
  const signal = new AbortController().signal;

  it('fails a parse that runs past its time limit with too_complex, and an oversized one past its memory limit', async () => {
    // No Markdown text is slow to parse any more (runs without spaces, which were, are cut short first: see
    // long-tokens.ts), so the limit is set below what starting a worker and parsing 100,000 characters take.
    const slow = new ParseRunner({ ...DEFAULT_PARSE_LIMITS, timeoutMs: 20 });
    await assert.rejects(
      slow.parseMarkdown('Word and word. '.repeat(6_666), 'The text', signal),
      (e: PipelineError) => e.code === 'too_complex' && /took longer than 0 s/.test(e.message),
    );
    const small = new ParseRunner({ ...DEFAULT_PARSE_LIMITS, memoryMb: 16, timeoutMs: 120_000 });
    await assert.rejects(
      small.extractHtml(
        `<html><body><div>${'<p>word word word</p>'.repeat(400_000)}</div></body></html>`,
        'http://127.0.0.1/big',
        signal,
      ),
      (e: PipelineError) => e.code === 'too_complex' && /more than 16 MB/.test(e.message),
    );
  });

  it('builds the script for speech off the main thread, and stops a script that takes longer than the time limit', async () => {
    const runner = new ParseRunner({ ...DEFAULT_PARSE_LIMITS, timeoutMs: 100 });
    const article = await new ParseRunner().parseMarkdown(
      '# Title\n\nThe river town woke early. Boats left before the sun rose.',
      'The text',
      signal,
    );
    const script = await new ParseRunner().buildScript(article, 'article-audio-1-mini', signal);
    assert.ok(
      script.lines.some((line) => /river town/.test(line.written)),
      JSON.stringify(script.lines),
    );
    // No text is pathological here any more ("1," repeated without spaces took minutes before long runs were cut):
    // a podcast script of 33,000 short tokens is simply longer to build than the 0.1 s limit of this runner.
    const hostile = { blocks: [{ kind: 'paragraph' as const, text: '1, '.repeat(33_330) }] };
    await assert.rejects(
      runner.buildScript(hostile, 'article-podcast-1-pro', signal),
      (e: PipelineError) => e.code === 'too_complex' && /Preparing the text for speech/.test(e.message),
    );
  });

  it('is ended when the job is cancelled', async () => {
    const runner = new ParseRunner({ ...DEFAULT_PARSE_LIMITS, timeoutMs: 120_000 });
    const controller = new AbortController();
    const parsing = runner.parseMarkdown('_a_'.repeat(33_333), 'The text', controller.signal);
    controller.abort(new PipelineError('cancelled', 'The job was cancelled.'));
    await assert.rejects(parsing, (e: PipelineError) => e.code === 'cancelled');
  });

  it('answers empty and element-less pages with fetch_failed and not_an_article, never a TypeError', async () => {
    const runner = new ParseRunner();
    await assert.rejects(
      runner.extractHtml('  \n', 'http://127.0.0.1/empty', signal),
      (e: PipelineError) => e.code === 'fetch_failed' && /empty page/.test(e.message),
    );
    for (const html of ['plain words only', '<!-- a comment -->', '<!doctype html>']) {
      await assert.rejects(
        runner.extractHtml(html, 'http://127.0.0.1/none', signal),
        (e: PipelineError) => e.code === 'not_an_article',
        html,
      );
    }
  });

  it('fails a bad intro with intro_unusable and the reason', async () => {
    const runner = new ParseRunner();
    await assert.rejects(
      runner.prepareClip(wav(1000, 2), 'intro', 'http://127.0.0.1/i.wav', 16_000, signal),
      (e: PipelineError) => e.code === 'intro_unusable' && /1,000 Hz/.test(e.message),
    );
    const samples = await runner.prepareClip(wav(44_100, 1), 'outro', 'http://127.0.0.1/o.wav', 16_000, signal);
    assert.ok(Math.abs(samples.length - 16_000) < 64);
  });
});

describe('smaller hostile cases', () => {
  it('a full, over-quota or read-only disk is storage_failed, found through error causes', () => {
    for (const code of ['ENOSPC', 'EDQUOT', 'EROFS']) {
      const failure = storageFailure(
        new Error('encoder', { cause: Object.assign(new Error(`write ${code}`), { code }) }),
      );
      assert.equal(failure?.code, 'storage_failed');
      assert.match(failure?.message ?? '', /Free some disk space/);
    }
    assert.equal(storageFailure(Object.assign(new Error('x'), { code: 'EACCES' })), undefined);
  });

  it('a disk that fills up while the audio is written fails the job as storage_failed, not synthesis_failed (a real full tmpfs)', async (t) => {
    const mountPoint = mkdtempSync(path.join(os.tmpdir(), 'aa-full-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mountPoint], { stdio: 'pipe' });
    } catch (error) {
      rmSync(mountPoint, { recursive: true, force: true });
      const reason = `cannot mount a small tmpfs here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}); needs root with CAP_SYS_ADMIN`;
      t.skip(reason);
      return;
    }
    const pipeline = createSpeechPipeline({ workers: 1 });
    try {
      const workDir = path.join(mountPoint, 'run');
      mkdirSync(workDir);
      // Filled to the last block: the MP3 writer's first frames do not fit.
      try {
        for (let i = 0; ; i++) writeFileSync(path.join(mountPoint, `filler-${i}`), Buffer.alloc(4096));
      } catch {
        // full
      }
      let failure: (Error & { code?: string }) | undefined;
      try {
        await pipeline.run(
          {
            jobId: 'full-disk',
            modelId: 'article-audio-1-mini',
            text: 'The river town woke early. Boats left before the sun rose. Markets filled with fish and bread.',
          },
          {
            workDir,
            signal: new AbortController().signal,
            progress: () => {},
            log: () => {},
            fetchLimits: FETCH_LIMITS,
          },
        );
      } catch (error) {
        failure = error as Error & { code?: string };
      }
      assert.equal(failure?.code, 'storage_failed', `${failure?.code}: ${failure?.message}`);
      assert.match(failure?.message ?? '', /disk is full \(ENOSPC\)\. Free some disk space/);
    } finally {
      await pipeline.close();
      execFileSync('umount', [mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    }
  });

  it('text of NULs or zero-width characters is refused; text with a few of them is not', () => {
    assert.equal(countCharacters('\u0000\u200b\ufeff a \u200d'), 1);
    const refused = checkSubmission({ model_id: 'article-audio-1-mini', text: '\u0000'.repeat(100) });
    assert.equal(refused.ok, false);
    assert.deepEqual(!refused.ok && refused.issues.map((p) => p.field), ['text']);
    const fine = checkSubmission({
      model_id: 'article-audio-1-mini',
      text: `Zero\u200bwidth joiners\u200d in a text of ordinary words that is long enough to be read.`,
    });
    assert.equal(fine.ok, true);
  });
});
