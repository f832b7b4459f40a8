// The speech pipeline end to end, measured on the audio it writes: the MP3 is decoded with the decoder the pipeline
// uses for intro and outro files, and compared with the transcript (cue timing against the audio's length, speech
// energy inside cues and silence between them), the podcast's two voices (pitch of Alex's and Sam's cues), pro's
// chapters (one per heading, in order, where the heading is spoken), intro and outro tones at the ends (WAV, MP3 and
// OGG files served by a loopback web server), an unusable intro, and cancellation. Short fixtures keep each run to seconds.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSpeechPipeline } from '../../src/speech';
import { PipelineError } from '../../src/speech/types';
import { Mp3Writer } from '../../src/speech/audio/mp3-writer';
import {
  type DecodedAudio,
  type PageServer,
  type PipelineRun,
  type VttCue,
  decodeMp3,
  median,
  medianPitch,
  parseVtt,
  rms,
  runJob,
  serve,
  startPageServer,
  toneShare,
  toneWav,
} from '../support/speech-support';
import { TONE_660_HZ_OGG } from '../support/ogg-tone';

const ARTICLES = path.join(__dirname, '..', 'fixtures', 'articles');
const SHORT = readFileSync(path.join(ARTICLES, 'short.md'), 'utf8');

/** Two sections, so that both podcast hosts read, and a few sentences each. */
const TWO_SECTIONS = `# Tides and mills

## How a tide mill works

Water is trapped behind a dam at high tide. It is let out through the wheel as the tide falls. The mill grinds grain for a few hours twice a day.

## Why they closed

Steam engines did not wait for the tide. By 1900 most tide mills had stopped, and only a few were kept as museums.
`;

interface Outputs {
  audio: DecodedAudio;
  cues: VttCue[];
  vttHeader: string;
  chapters: { duration_s: number; chapters: { title: string; level: number; start_s: number; end_s: number }[] };
  markdown: string;
}

async function outputsOf(run: PipelineRun): Promise<Outputs> {
  assert.equal(run.error, undefined, String(run.error?.stack ?? run.error));
  const file = (name: string) => readFileSync(path.join(run.dir, name));
  const { header, cues } = parseVtt(file('transcript.vtt').toString('utf8'));
  return {
    audio: await decodeMp3(file('audio.mp3')),
    cues,
    vttHeader: header,
    chapters: JSON.parse(file('chapters.json').toString('utf8')) as Outputs['chapters'],
    markdown: file('article.md').toString('utf8'),
  };
}

/** The cue timing is what was written to the encoder; the decoded MP3 may add up to a frame or two of padding. */
function assertTimingMatchesAudio(out: Outputs, durationS: number, tailS = 1.3): void {
  const { audio, cues } = out;
  assert.ok(
    Math.abs(audio.durationS - durationS) < 0.15,
    `decoded ${audio.durationS.toFixed(3)} s vs reported ${durationS.toFixed(3)} s`,
  );
  let previousEnd = 0;
  for (const cue of cues) {
    assert.ok(cue.start >= previousEnd - 0.001 && cue.end > cue.start, `cue out of order: ${JSON.stringify(cue)}`);
    previousEnd = cue.end;
  }
  const last = cues[cues.length - 1]!;
  assert.ok(
    last.end <= audio.durationS + 0.01,
    `the last cue ends at ${last.end} s, after the audio (${audio.durationS} s)`,
  );
  // After the last sentence there is only its pause (a paragraph's: Mini's is 1.15 s) or the outro, not untranscribed
  // speech (a sentence is longer).
  assert.ok(
    audio.durationS - last.end < tailS,
    `${(audio.durationS - last.end).toFixed(2)} s of audio after the last cue`,
  );
}

/** Speech inside every cue, near-silence in every pause between cues of at least 150 ms. */
function assertSpeechWhereTranscribed(out: Outputs): { speech: number; pause: number } {
  const { audio, cues } = out;
  const inside = cues.map((cue) => rms(audio, cue.start + 0.05, cue.end - 0.05));
  const quietest = Math.min(...inside);
  const gaps: number[] = [];
  for (let i = 1; i < cues.length; i++) {
    const from = cues[i - 1]!.end;
    const to = cues[i]!.start;
    if (to - from >= 0.15) gaps.push(rms(audio, from + 0.03, to - 0.03));
  }
  assert.ok(gaps.length >= 3, `too few pauses to judge (${gaps.length})`);
  const loudestGap = Math.max(...gaps);
  assert.ok(quietest > 0.02, `a cue holds no speech: RMS ${quietest.toFixed(4)} (cue ${inside.indexOf(quietest) + 1})`);
  assert.ok(loudestGap < 0.005, `a pause holds sound: RMS ${loudestGap.toFixed(4)}`);
  assert.ok(quietest > loudestGap * 10, `speech ${quietest} vs pause ${loudestGap}`);
  return { speech: quietest, pause: loudestGap };
}

describe('speech pipeline: audio against transcript', () => {
  const pipeline = createSpeechPipeline({ workers: 2 });
  let pages: PageServer;
  const INTRO_HZ = 440;
  const OUTRO_HZ = 1000;
  const INTRO_S = 1.5;
  const OUTRO_S = 1.2;

  before(async () => {
    // The outro as an MP3 at 24 kHz, made with the pipeline's own encoder; the intro a 44.1 kHz WAV: both resampled.
    const outroPath = path.join(os.tmpdir(), `aa-outro-${process.pid}.mp3`);
    const writer = await Mp3Writer.create(outroPath, 24_000, 64_000);
    const tone = new Float32Array(Math.round(OUTRO_S * 24_000));
    for (let i = 0; i < tone.length; i++) tone[i] = 0.6 * Math.sin((2 * Math.PI * OUTRO_HZ * i) / 24_000);
    await writer.write(tone);
    await writer.finish();
    const outroMp3 = readFileSync(outroPath);
    rmSync(outroPath);
    pages = await startPageServer({
      '/intro.wav': serve(toneWav(INTRO_HZ, INTRO_S, 44_100, 0.8), 'audio/wav'),
      // Served as a generic type, as many file hosts do: the pipeline tells the format by its bytes.
      '/outro.mp3': serve(outroMp3, 'application/octet-stream'),
      '/intro.ogg': serve(TONE_660_HZ_OGG, 'audio/ogg'),
      '/broken.mp3': serve('<html><body>Sorry, this file has moved.</body></html>', 'audio/mpeg'),
      '/empty.wav': serve(toneWav(INTRO_HZ, 0.01), 'audio/wav'),
    });
  });
  after(async () => {
    await pages.close();
    await pipeline.close();
  });

  it('mini: the transcript ends with the audio, speech is where the cues are, progress rises, logs tell the steps', async (t) => {
    const run = await runJob(pipeline, { modelId: 'article-audio-1-mini', text: SHORT });
    try {
      const out = await outputsOf(run);
      assertTimingMatchesAudio(out, run.output!.durationS);
      const levels = assertSpeechWhereTranscribed(out);
      t.diagnostic(
        `mini: ${out.audio.durationS.toFixed(1)} s, ${out.cues.length} cues, quietest cue RMS ${levels.speech.toFixed(3)}, loudest pause RMS ${levels.pause.toFixed(4)}`,
      );
      // Every sentence of the text is a cue, as written.
      assert.ok(
        out.cues.some((c) => c.text === 'The town council mapped the letters kept since 1987 despite the cold winter.'),
      );
      assert.equal(out.vttHeader, 'WEBVTT - A short article about patient work');
      assert.ok(
        out.cues.every((c) => c.voice === undefined),
        'one voice: no speaker tags',
      );
      assert.deepEqual(
        run.output!.files.map((f) => f.contentType),
        ['audio/mpeg', 'text/vtt', 'application/json', 'text/markdown'],
      );
      assert.ok(
        run.progress.every((p, i) => i === 0 || p >= run.progress[i - 1]!),
        'progress never falls',
      );
      assert.ok(run.progress[0]! <= 0.05 && run.progress[run.progress.length - 1]! >= 0.95, run.progress.join(' '));
      assert.ok(run.progress.length >= 10, `progress moved in ${run.progress.length} steps`);
      for (const pattern of [
        /^Extracted \d+ words \(title: A short article about patient work\)\.$/,
        /^Synthesizing section 1 of \d+\.$/,
        /^Encoding/,
        /^Made (?:\d+ min )?\d+ s of audio, \d+ sentences, \d+ chapters\.$/,
      ]) {
        assert.ok(
          run.logs.some((line) => pattern.test(line)),
          `no log line like ${pattern}:\n${run.logs.join('\n')}`,
        );
      }
    } finally {
      run.dispose();
    }
  });

  it('podcast: two distinct voices, tagged Alex and Sam in the transcript', async (t) => {
    const run = await runJob(pipeline, { modelId: 'article-podcast-1-pro', text: TWO_SECTIONS });
    try {
      const out = await outputsOf(run);
      assertTimingMatchesAudio(out, run.output!.durationS);
      assertSpeechWhereTranscribed(out);
      // Word timestamps (`<00:00:01.234>`) taken out: the sentences as written.
      const vtt = readFileSync(path.join(run.dir, 'transcript.vtt'), 'utf8').replace(/<[\d:.]+>/g, '');
      assert.match(vtt, /\n<v Alex>Hello, and welcome to Article Audio\. I'm Alex\.\n/);
      assert.match(vtt, /\n<v Sam>And I'm Sam\. Today: “Tides and mills”\.\n/);
      const by = (voice: string) => out.cues.filter((c) => c.voice === voice);
      assert.ok(
        by('Alex').length >= 4 && by('Sam').length >= 4,
        `Alex ${by('Alex').length} cues, Sam ${by('Sam').length}`,
      );
      assert.equal(by('Alex').length + by('Sam').length, out.cues.length, 'every cue names its speaker');
      const pitches = (voice: string) =>
        by(voice)
          .map((c) => medianPitch(out.audio, c.start, c.end))
          .filter((p) => Number.isFinite(p));
      const alex = median(pitches('Alex'));
      const sam = median(pitches('Sam'));
      t.diagnostic(
        `podcast: median pitch Alex ${alex.toFixed(0)} Hz, Sam ${sam.toFixed(0)} Hz over ${out.cues.length} cues`,
      );
      // The male voice (rms) speaks around 100-130 Hz, the female one (slt) well above.
      assert.ok(sam > alex * 1.3, `Alex ${alex.toFixed(0)} Hz and Sam ${sam.toFixed(0)} Hz are not distinct voices`);
      // Each host is consistent: most of each host's cues sit on that host's side of the midpoint.
      const middle = (alex + sam) / 2;
      const alexLow = pitches('Alex').filter((p) => p < middle).length / pitches('Alex').length;
      const samHigh = pitches('Sam').filter((p) => p > middle).length / pitches('Sam').length;
      assert.ok(alexLow >= 0.8 && samHigh >= 0.8, `cues on their host's side: Alex ${alexLow}, Sam ${samHigh}`);
    } finally {
      run.dispose();
    }
  });

  it('pro: one chapter per heading, in order, starting where the heading is spoken and ending at the next', async () => {
    const run = await runJob(pipeline, { modelId: 'article-audio-1-pro', text: TWO_SECTIONS });
    try {
      const out = await outputsOf(run);
      assertTimingMatchesAudio(out, run.output!.durationS);
      const { chapters, duration_s: duration } = out.chapters;
      assert.deepEqual(
        chapters.map((c) => [c.title, c.level]),
        [
          ['Tides and mills', 1],
          ['How a tide mill works', 2],
          ['Why they closed', 2],
        ],
      );
      assert.equal(chapters[0]!.start_s, 0);
      for (const [i, chapter] of chapters.entries()) {
        const cue = out.cues.find((c) => c.text === chapter.title);
        assert.ok(cue, `no cue for the heading ${chapter.title}`);
        assert.ok(
          Math.abs(cue.start - chapter.start_s) < 0.002,
          `${chapter.title}: chapter at ${chapter.start_s} s, heading spoken at ${cue.start} s`,
        );
        assert.equal(chapter.end_s, chapters[i + 1]?.start_s ?? duration);
        if (i > 0) assert.ok(chapter.start_s > chapters[i - 1]!.start_s + 1, 'chapters start later and later');
      }
      assert.ok(Math.abs(duration - out.audio.durationS) < 0.15);
      // Pro pauses before a heading: at least 0.9 s of silence before each section heading.
      for (const chapter of chapters.slice(1)) {
        const before = out.cues.filter((c) => c.end <= chapter.start_s).pop()!;
        assert.ok(
          chapter.start_s - before.end >= 0.9,
          `pause before ${chapter.title}: ${(chapter.start_s - before.end).toFixed(2)} s`,
        );
        assert.ok(rms(out.audio, before.end + 0.05, chapter.start_s - 0.05) < 0.005);
      }
      assert.match(out.markdown, /^# Tides and mills\n\n## How a tide mill works\n\nWater is trapped/);
    } finally {
      run.dispose();
    }
  });

  it('intro and outro: their tones open and close the MP3, level-matched, with the speech between them', async (t) => {
    const run = await runJob(pipeline, {
      modelId: 'article-audio-1-mini',
      text: TWO_SECTIONS,
      introAudioUrl: pages.url('/intro.wav'),
      outroAudioUrl: pages.url('/outro.mp3'),
    });
    try {
      const out = await outputsOf(run);
      // After the last cue: Mini's paragraph pause (1.15 s), the gap before the outro (0.6 s), then the outro.
      assertTimingMatchesAudio(out, run.output!.durationS, OUTRO_S + 1.8);
      const { audio, cues } = out;
      const first = cues[0]!;
      const last = cues[cues.length - 1]!;
      const introShare = toneShare(audio, 0.1, INTRO_S - 0.4, INTRO_HZ);
      const outroShare = toneShare(audio, audio.durationS - OUTRO_S + 0.4, audio.durationS - 0.1, OUTRO_HZ);
      t.diagnostic(
        `intro: ${INTRO_HZ} Hz holds ${(introShare * 100).toFixed(0)}% of the first second's energy; outro: ${OUTRO_HZ} Hz ${(outroShare * 100).toFixed(0)}% of the last`,
      );
      assert.ok(introShare > 0.8, `intro tone share ${introShare}`);
      assert.ok(outroShare > 0.8, `outro tone share ${outroShare}`);
      // The speech is not the tone, and the tones are where the transcript says nothing.
      assert.ok(toneShare(audio, first.start, first.end, INTRO_HZ) < 0.1);
      assert.ok(
        first.start >= INTRO_S + 0.5,
        `the first cue starts at ${first.start} s, inside the ${INTRO_S} s intro`,
      );
      assert.ok(last.end <= audio.durationS - OUTRO_S, `the last cue ends at ${last.end} s, inside the outro`);
      // Loudness-matched: the tones are brought near the speech level (the intro was served at 0.8 peak).
      const speech = rms(audio, first.start, first.end);
      const intro = rms(audio, 0.1, INTRO_S - 0.4);
      assert.ok(intro / speech > 0.5 && intro / speech < 2, `intro RMS ${intro} vs speech ${speech}`);
      assert.ok(
        run.logs.some((line) => /^Using 1\.5 s of intro audio\.$/.test(line)),
        run.logs.join('\n'),
      );
      assert.ok(
        run.logs.some((line) => /^Using 1\.2 s of outro audio\.$/.test(line)),
        run.logs.join('\n'),
      );
    } finally {
      run.dispose();
    }
  });

  it('an OGG Vorbis intro is decoded and opens the MP3', async () => {
    const run = await runJob(pipeline, {
      modelId: 'article-audio-1-mini',
      text: TWO_SECTIONS,
      introAudioUrl: pages.url('/intro.ogg'),
    });
    try {
      const out = await outputsOf(run);
      assertTimingMatchesAudio(out, run.output!.durationS);
      assert.ok(toneShare(out.audio, 0.1, 0.6, 660) > 0.8, `660 Hz share ${toneShare(out.audio, 0.1, 0.6, 660)}`);
      assert.ok(
        out.cues[0]!.start >= 1.5,
        `the first cue starts at ${out.cues[0]!.start} s, inside the 1 s intro and its gap`,
      );
      assert.ok(run.logs.includes('Using 1.0 s of intro audio.'), run.logs.join('\n'));
    } finally {
      run.dispose();
    }
  });

  it('an intro that is not audio, an empty one or a missing outro fails the job before any speech is made', async () => {
    const cases = [
      {
        introAudioUrl: pages.url('/broken.mp3'),
        code: 'intro_unusable',
        message: /cannot be used: it is not an MP3, OGG or WAV file/,
      },
      { introAudioUrl: pages.url('/empty.wav'), code: 'intro_unusable', message: /is empty/ },
      {
        outroAudioUrl: pages.url('/missing.ogg'),
        code: 'outro_unusable',
        message: /could not be fetched: .* answered 404/,
      },
    ];
    for (const { code, message, ...clips } of cases) {
      const run = await runJob(pipeline, { modelId: 'article-audio-1-mini', text: TWO_SECTIONS, ...clips });
      run.dispose();
      assert.equal(run.error?.code, code, String(run.error));
      assert.match(run.error.message, message);
      assert.ok(!run.logs.some((line) => line.startsWith('Synthesizing')), run.logs.join('\n'));
    }
  });

  it('cancel: a job stops soon after its signal, leaves no audio, and the synthesizers serve the next job', async () => {
    const controller = new AbortController();
    const reason = new PipelineError('cancelled', 'The job was cancelled.');
    let cancelledAt = 0;
    // Twelve short sections: the job is cancelled when it reaches the second, with ten still to come.
    const sections = Array.from(
      { length: 12 },
      (_, i) => `## Part ${i + 1}\n\nThis part has one sentence of its own, number ${i + 1}, and then it ends.`,
    );
    const running = runJob(
      pipeline,
      { modelId: 'article-audio-1-pro', text: `# Many parts\n\n${sections.join('\n\n')}\n` },
      {
        signal: controller.signal,
        onLog: (line) => {
          if (cancelledAt === 0 && line === 'Synthesizing section 2 of 12.') {
            cancelledAt = Date.now();
            controller.abort(reason);
          }
        },
      },
    );
    const run = await running;
    try {
      assert.ok(cancelledAt > 0, `the job never reached its second section:\n${run.logs.join('\n')}`);
      assert.equal(run.error, reason);
      assert.deepEqual(readdirSync(run.dir), [], 'a cancelled job leaves no files');
      const lastProgress = run.progress[run.progress.length - 1]!;
      assert.ok(lastProgress < 0.5, `progress went on to ${lastProgress}`);
      assert.ok(
        !run.logs.some((line) => /^Synthesizing section [3-9]|^Synthesizing section 1\d|^Encoding|^Made/.test(line)),
        run.logs.join('\n'),
      );
    } finally {
      run.dispose();
    }
    const next = await runJob(pipeline, { modelId: 'article-audio-1-mini', text: TWO_SECTIONS });
    try {
      assert.equal(next.error, undefined, String(next.error));
      assert.ok(existsSync(path.join(next.dir, 'audio.mp3')));
    } finally {
      next.dispose();
    }
  });
});
