// Word timings in the transcript (issue 26): a real fixture converted by the real pipeline with the built-in voices
// carries a WebVTT cue timestamp (`<00:01:02.345>`) before at least 95 % of its words, strictly increasing inside
// their cue, in the job's transcript and in each part's (timed from the part's start), and the words they time are
// where the voice says them: a cue's last timestamp falls late in the cue, not bunched at its start.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createSpeechPipeline } from '../../src/speech';
import type { EngineModelId } from '../../src/speech/types';
import { FETCH_LIMITS, type VttCue, parseVtt } from '../support/speech-support';

const ARTICLES = path.join(__dirname, '..', 'fixtures', 'articles');

interface Counts {
  words: number;
  timed: number;
}

/** Checks each cue's timestamps (strictly increasing, inside the cue) and counts its words and timed words. */
function checkCues(cues: VttCue[], where: string): Counts {
  let words = 0;
  let timed = 0;
  for (const cue of cues) {
    let last = cue.start;
    cue.words.forEach((word, i) => {
      words++;
      if (i === 0) {
        assert.equal(word.start, undefined, `${where}: a timestamp before the first word of "${cue.text}"`);
        timed++;
        return;
      }
      if (word.start === undefined) return;
      timed++;
      assert.ok(word.start > last, `${where}: ${word.start} s is not after ${last} s in "${cue.text}"`);
      assert.ok(word.start < cue.end, `${where}: ${word.start} s is not before the cue's end ${cue.end} s`);
      last = word.start;
    });
  }
  return { words, timed };
}

describe('engine: word timings in the transcript', { timeout: 900_000 }, () => {
  const pipeline = createSpeechPipeline();
  const dirs: string[] = [];
  after(async () => {
    await pipeline.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  for (const [fixture, modelId] of [
    ['medium.md', 'article-audio-1-pro'],
    ['short.md', 'article-audio-1-mini'],
  ] as [string, EngineModelId][]) {
    it(`${fixture} (${modelId}): >= 95 % of words timed, in order, inside their cue, in the parts too`, async (t) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-words-'));
      dirs.push(dir);
      const partVtts: { startS: number; vtt: string }[] = [];
      await pipeline.run(
        { jobId: 'words', modelId, text: readFileSync(path.join(ARTICLES, fixture), 'utf8') },
        {
          workDir: dir,
          signal: new AbortController().signal,
          progress: () => undefined,
          log: () => undefined,
          fetchLimits: FETCH_LIMITS,
          publishPart: (part) => {
            partVtts.push({ startS: part.startS, vtt: readFileSync(path.join(dir, part.files[1]!.name), 'utf8') });
            return Promise.resolve();
          },
        },
      );
      const { cues } = parseVtt(readFileSync(path.join(dir, 'transcript.vtt'), 'utf8'));
      const whole = checkCues(cues, 'transcript.vtt');
      const share = whole.timed / whole.words;
      t.diagnostic(`${fixture}: ${whole.timed} of ${whole.words} words timed (${(share * 100).toFixed(1)} %)`);
      assert.ok(share >= 0.95, `only ${(share * 100).toFixed(1)} % of the words are timed`);

      // Where the voice says them: over the cues of eight words or more, the last timestamp is in the cue's later
      // part (a line's words spread over its audio, not bunched up at its start).
      const long = cues.filter((c) => c.words.length >= 8 && c.words.some((w) => w.start !== undefined));
      const late = long.filter((c) => {
        const lastStart = c.words.findLast((w) => w.start !== undefined)!.start!;
        return (lastStart - c.start) / (c.end - c.start) > 0.6;
      });
      assert.ok(late.length >= long.length * 0.9, `${late.length} of ${long.length} long cues end their words late`);

      // The parts' transcripts: the same words and timestamps, timed from each part's start.
      assert.ok(partVtts.length >= 2, `${partVtts.length} parts`);
      const fromParts: VttCue[] = [];
      partVtts.forEach(({ startS, vtt }, i) => {
        const partCues = parseVtt(vtt).cues;
        checkCues(partCues, `part ${i}`);
        for (const cue of partCues)
          fromParts.push({
            ...cue,
            start: cue.start + startS,
            end: cue.end + startS,
            words: cue.words.map((w) => (w.start === undefined ? w : { ...w, start: w.start + startS })),
          });
      });
      assert.equal(fromParts.length, cues.length, 'the parts hold every cue');
      fromParts.forEach((cue, i) => {
        const same = cues[i]!;
        assert.equal(cue.text, same.text);
        const a = cue.words.map((w) => w.start);
        const b = same.words.map((w) => w.start);
        assert.equal(a.length, b.length);
        a.forEach((s, k) => {
          assert.equal(s === undefined, b[k] === undefined, `"${cue.text}" word ${k}: timed in one, not the other`);
          if (s !== undefined) assert.ok(Math.abs(s - b[k]!) < 0.0025, `"${cue.text}" word ${k}: ${s} s, ${b[k]} s`);
        });
      });
    });
  }
});
