// A pipeline for testing the engine's service without speech synthesis. It really writes the four output files the
// speech pipeline writes (a silent MP3 made of valid MPEG-1 Layer III frames, a WebVTT transcript, a JSON chapter
// list, the article as Markdown), takes as long as it is told, reports progress and log lines, stops on abort, and
// can be held in the processing phase or made to fail, so tests can hit every phase of a job.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type ArticlePipeline,
  type PipelineContext,
  type PipelineErrorCode,
  type PipelineInput,
  type PipelineOutput,
  PipelineError,
} from '../../src/speech/types';

export interface TestPipelineOptions {
  /** Progress steps per run (each reports progress and, every few, a log line). Default 4. */
  steps?: number;
  /** Time per step. Default 10 ms. */
  stepMs?: number;
  /** Seconds of (silent) audio to write. Default 2. */
  audioSeconds?: number;
  /** A promise to wait on before working, to keep a job in `processing` for as long as a test needs. */
  hold?: (input: PipelineInput) => Promise<void> | undefined;
  /** Keeps running after an abort (a pipeline that does not cooperate). */
  ignoreAbort?: boolean;
  /** Parts of the audio to publish while running (slices of the final MP3, spread over the steps). Default 0. */
  parts?: number;
  /** Waited on after each part is published, to hold a job between two parts for as long as a test needs. */
  afterPart?: (index: number, input: PipelineInput) => Promise<void> | undefined;
}

/** Text containing `FAIL:<code>` makes the run fail with that pipeline error code. */
const FAIL_MARK = /FAIL:([a-z_]+)/;

export interface TestPipeline extends ArticlePipeline {
  readonly runs: PipelineInput[];
  closed: boolean;
}

export function createTestPipeline(options: TestPipelineOptions = {}): TestPipeline {
  const steps = options.steps ?? 4;
  const stepMs = options.stepMs ?? 10;
  const audioSeconds = options.audioSeconds ?? 2;
  const pipeline: TestPipeline = {
    runs: [],
    closed: false,
    async run(input: PipelineInput, context: PipelineContext): Promise<PipelineOutput> {
      pipeline.runs.push(input);
      const checkAbort = () => {
        if (context.signal.aborted && !options.ignoreAbort) throw new PipelineError('cancelled', 'Stopped.');
      };
      context.log('info', `Reading ${input.url ?? `${input.text?.length ?? 0} characters`}.`);
      let text = input.text ?? '';
      if (input.url !== undefined) {
        // Fetched for real, as the speech pipeline does: a page that never answers keeps the job in `processing`.
        let response: Response;
        try {
          response = await fetch(input.url, {
            signal: AbortSignal.any([context.signal, AbortSignal.timeout(context.fetchLimits.timeoutMs)]),
          });
          text = await response.text();
        } catch (error) {
          if (context.signal.aborted && !options.ignoreAbort) throw new PipelineError('cancelled', 'Stopped.');
          throw new PipelineError('fetch_failed', `Could not fetch ${input.url}: ${(error as Error).message}`);
        }
        if (!response.ok) throw new PipelineError('fetch_failed', `${input.url} answered ${response.status}.`);
      }
      const held = options.hold?.(input);
      if (held) await Promise.race([held, aborted(context.signal, options.ignoreAbort)]);
      checkAbort();
      const failure = FAIL_MARK.exec(text);
      if (failure) throw new PipelineError(failure[1] as PipelineErrorCode, `Failing on request (${failure[1]}).`);
      const parts = options.parts ?? 0;
      const audio = silentMp3(audioSeconds);
      const frameBytes = Math.floor((144 * 128_000) / 44_100);
      const frames = audio.length / frameBytes;
      let published = 0;
      for (let step = 1; step <= steps; step++) {
        await sleep(stepMs, context.signal, options.ignoreAbort);
        checkAbort();
        context.progress(step / steps);
        if (step % 2 === 0) context.log('debug', `Step ${step} of ${steps}.`);
        while (context.publishPart && published < parts && published < Math.floor((step * parts) / steps)) {
          const from = Math.floor((published * frames) / parts);
          const to = Math.floor(((published + 1) * frames) / parts);
          const name = `part-${String(published).padStart(4, '0')}`;
          await writeFile(
            path.join(context.workDir, `${name}.mp3`),
            audio.subarray(from * frameBytes, to * frameBytes),
          );
          await writeFile(
            path.join(context.workDir, `${name}.vtt`),
            `WEBVTT\n\n00:00:00.000 --> 00:00:00.500\nPart ${published}.\n`,
          );
          const startS = (from * 1152) / 44_100;
          const durationS = ((to - from) * 1152) / 44_100;
          await context.publishPart({
            index: published,
            startS,
            durationS,
            final: published === parts - 1,
            files: [
              { name: `${name}.mp3`, contentType: 'audio/mpeg', durationS },
              { name: `${name}.vtt`, contentType: 'text/vtt', durationS },
            ],
          });
          published++;
          const held = options.afterPart?.(published - 1, input);
          if (held) await Promise.race([held, aborted(context.signal, options.ignoreAbort)]);
          checkAbort();
        }
      }
      const title = (input.text ?? input.url ?? 'Untitled').split('\n')[0]?.slice(0, 40) ?? 'Untitled';
      await writeFile(path.join(context.workDir, 'audio.mp3'), audio);
      await writeFile(
        path.join(context.workDir, 'transcript.vtt'),
        `WEBVTT\n\n00:00:00.000 --> 00:00:0${Math.min(9, audioSeconds)}.000\n${title}\n`,
      );
      await writeFile(path.join(context.workDir, 'chapters.json'), JSON.stringify([{ start: 0, title }]));
      await writeFile(path.join(context.workDir, 'article.md'), `# ${title}\n\n${input.text ?? ''}\n`);
      await writeFile(path.join(context.workDir, 'scratch.tmp'), 'a file the pipeline did not list');
      return {
        title,
        durationS: audioSeconds,
        files: [
          { name: 'audio.mp3', contentType: 'audio/mpeg', durationS: audioSeconds },
          { name: 'transcript.vtt', contentType: 'text/vtt', durationS: audioSeconds },
          { name: 'chapters.json', contentType: 'application/json' },
          { name: 'article.md', contentType: 'text/markdown' },
        ],
      };
    },
    close() {
      pipeline.closed = true;
      return Promise.resolve();
    },
  };
  return pipeline;
}

/** Silence as MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, mono: frames whose side information codes no samples. */
export function silentMp3(seconds: number): Buffer {
  const frameBytes = Math.floor((144 * 128_000) / 44_100);
  const frames = Math.max(1, Math.ceil((seconds * 44_100) / 1152));
  const audio = Buffer.alloc(frames * frameBytes);
  for (let i = 0; i < frames; i++) audio.set([0xff, 0xfb, 0x90, 0xc0], i * frameBytes);
  return audio;
}

function sleep(ms: number, signal: AbortSignal, ignoreAbort = false): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    if (!ignoreAbort) signal.addEventListener('abort', done, { once: true });
  });
}

function aborted(signal: AbortSignal, ignoreAbort = false): Promise<void> {
  if (ignoreAbort) return new Promise(() => undefined);
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
