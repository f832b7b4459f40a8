// Shared by the speech pipeline's tests: running the real pipeline on a job, a loopback web server with routes the
// test defines, measures of extracted text (word-overlap F1) and of audio (decoding the MP3 the pipeline wrote,
// energy, zero crossings, pitch, the strength of one frequency), and WebVTT parsing.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { ArticlePipeline, FetchLimits, PipelineInput, PipelineOutput } from '../../src/speech/types';

// The page servers of these tests are on loopback.
export const FETCH_LIMITS: FetchLimits = {
  maxBytes: 10 * 1024 * 1024,
  timeoutMs: 20_000,
  maxRedirects: 5,
  allowPrivateNetwork: true,
};

export interface PipelineRun {
  dir: string;
  output?: PipelineOutput;
  error?: Error & { code?: string };
  logs: string[];
  progress: number[];
  dispose(): void;
}

/** Runs one job through the pipeline in a fresh work folder; never throws (the error is in the result). */
export async function runJob(
  pipeline: ArticlePipeline,
  input: Omit<PipelineInput, 'jobId'> & { jobId?: string },
  options: {
    signal?: AbortSignal;
    fetchLimits?: Partial<FetchLimits>;
    onLog?: (message: string) => void;
    onProgress?: (fraction: number) => void;
  } = {},
): Promise<PipelineRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-speech-'));
  const logs: string[] = [];
  const progress: number[] = [];
  const run: PipelineRun = { dir, logs, progress, dispose: () => rmSync(dir, { recursive: true, force: true }) };
  try {
    run.output = await pipeline.run(
      { jobId: 'test-job', ...input },
      {
        workDir: dir,
        signal: options.signal ?? new AbortController().signal,
        progress: (fraction) => {
          progress.push(fraction);
          options.onProgress?.(fraction);
        },
        log: (_level, message) => {
          logs.push(message);
          options.onLog?.(message);
        },
        fetchLimits: { ...FETCH_LIMITS, ...options.fetchLimits },
      },
    );
  } catch (error) {
    run.error = error as Error & { code?: string };
  }
  return run;
}

export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface PageServer {
  base: string;
  url(pathname: string): string;
  /** Requests seen, by path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** A loopback HTTP server answering each path with its route (404 otherwise). */
export async function startPageServer(routes: Record<string, Route>): Promise<PageServer> {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(pathname, (hits.get(pathname) ?? 0) + 1);
    const route = routes[pathname];
    if (route) route(req, res);
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    url: (pathname) => base + pathname,
    hits,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Serves fixed bytes with a content type. */
export function serve(body: string | Uint8Array, contentType: string): Route {
  return (_req, res) => res.writeHead(200, { 'content-type': contentType }).end(body);
}

// ── Text ────────────────────────────────────────────────────────────────────────────────────────────────────────

export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .split(/[^\p{L}\p{N}']+/u)
    .map((w) => w.replace(/^'+|'+$/g, ''))
    .filter((w) => w.length > 0);
}

/** Word-overlap precision, recall and F1 of extracted text against the expected text (bags of words). */
export function wordOverlap(expected: string, actual: string): { precision: number; recall: number; f1: number } {
  const counts = new Map<string, number>();
  const want = words(expected);
  const got = words(actual);
  for (const w of want) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of got) {
    const left = counts.get(w) ?? 0;
    if (left > 0) {
      common++;
      counts.set(w, left - 1);
    }
  }
  const precision = got.length === 0 ? 0 : common / got.length;
  const recall = want.length === 0 ? 0 : common / want.length;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1 };
}

// ── Transcript ──────────────────────────────────────────────────────────────────────────────────────────────────

export interface VttCue {
  start: number;
  end: number;
  voice?: string;
  /** The cue's text, its word timestamps taken out. */
  text: string;
  /** The cue's words with the timestamp before each (`<00:00:01.234>`), undefined where none stands. */
  words: { text: string; start?: number }[];
}

function seconds(stamp: string): number {
  const parts = stamp.split(':').map(Number);
  return parts.reduce((total, part) => total * 60 + part, 0);
}

export function parseVtt(vtt: string): { header: string; cues: VttCue[] } {
  const blocks = vtt
    .replace(/\r\n/g, '\n')
    .trim()
    .split(/\n{2,}/);
  const header = blocks.shift() ?? '';
  const cues = blocks
    .filter((block) => !block.startsWith('NOTE'))
    .map((block) => {
      const lines = block.split('\n');
      const timing = lines.findIndex((line) => line.includes('-->'));
      const match = /^([\d:.]+)\s+-->\s+([\d:.]+)/.exec(lines[timing] ?? '');
      if (!match) throw new Error(`Not a cue: ${block}`);
      const body = lines.slice(timing + 1).join('\n');
      const voice = /^<v ([^>]+)>/.exec(body)?.[1];
      const marked = body.replace(/^<v [^>]+>/, '');
      const words = marked
        .split(/\s+/)
        .filter(Boolean)
        .map((word) => {
          const stamp = /^<([\d:.]+)>/.exec(word);
          return stamp ? { text: word.slice(stamp[0].length), start: seconds(stamp[1]!) } : { text: word };
        });
      const text = marked.replace(/<[\d:.]+>/g, '');
      return { start: seconds(match[1]!), end: seconds(match[2]!), voice, text, words };
    });
  return { header, cues };
}

// ── Audio ───────────────────────────────────────────────────────────────────────────────────────────────────────

export interface DecodedAudio {
  samples: Float32Array;
  sampleRate: number;
  durationS: number;
}

/** The middle value (the upper one of the two middle values for an even count). */
export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Decodes an MP3 with the decoder the pipeline itself uses for intro and outro files. */
export async function decodeMp3(bytes: Uint8Array): Promise<DecodedAudio> {
  const decode = (await import('@audio/decode-mp3')).default as (
    data: Uint8Array,
  ) => Promise<{ channelData: Float32Array[]; sampleRate: number }>;
  const decoded = await decode(bytes);
  const samples = decoded.channelData[0] ?? new Float32Array(0);
  return { samples, sampleRate: decoded.sampleRate, durationS: samples.length / decoded.sampleRate };
}

function span(audio: DecodedAudio, from: number, to: number): Float32Array {
  const start = Math.max(0, Math.floor(from * audio.sampleRate));
  const end = Math.min(audio.samples.length, Math.ceil(to * audio.sampleRate));
  return audio.samples.subarray(start, Math.max(start, end));
}

export function rms(audio: DecodedAudio, from: number, to: number): number {
  const part = span(audio, from, to);
  if (part.length === 0) return 0;
  let sum = 0;
  for (const s of part) sum += s * s;
  return Math.sqrt(sum / part.length);
}

/** Zero crossings per second over the loud 20 ms frames of a span (voiced and unvoiced speech alike). */
export function zeroCrossingRate(audio: DecodedAudio, from: number, to: number): number {
  const part = span(audio, from, to);
  let crossings = 0;
  for (let i = 1; i < part.length; i++) if (part[i - 1]! >= 0 !== part[i]! >= 0) crossings++;
  return part.length === 0 ? 0 : (crossings * audio.sampleRate) / part.length;
}

/**
 * The median pitch (Hz) of the voiced 40 ms frames of a span, by normalized autocorrelation between 60 and 400 Hz.
 * Returns NaN when no frame is voiced.
 */
export function medianPitch(audio: DecodedAudio, from: number, to: number): number {
  const part = span(audio, from, to);
  const rate = audio.sampleRate;
  const frame = Math.round(rate * 0.04);
  const minLag = Math.floor(rate / 400);
  const maxLag = Math.ceil(rate / 60);
  const pitches: number[] = [];
  for (let start = 0; start + frame + maxLag < part.length; start += frame) {
    let energy = 0;
    for (let i = 0; i < frame; i++) energy += part[start + i]! ** 2;
    if (energy / frame < 1e-4) continue;
    let bestLag = 0;
    let best = 0;
    for (let lag = minLag; lag <= maxLag; lag++) {
      let sum = 0;
      let shifted = 0;
      for (let i = 0; i < frame; i++) {
        sum += part[start + i]! * part[start + i + lag]!;
        shifted += part[start + i + lag]! ** 2;
      }
      const score = sum / Math.sqrt(energy * shifted + 1e-12);
      if (score > best) {
        best = score;
        bestLag = lag;
      }
    }
    if (best > 0.6 && bestLag > 0) pitches.push(rate / bestLag);
  }
  if (pitches.length === 0) return Number.NaN;
  pitches.sort((a, b) => a - b);
  return pitches[Math.floor(pitches.length / 2)]!;
}

/** The share of a span's energy at one frequency (Goertzel), 0..1: near 1 for a pure tone, near 0 for speech. */
export function toneShare(audio: DecodedAudio, from: number, to: number, frequency: number): number {
  const part = span(audio, from, to);
  if (part.length === 0) return 0;
  const omega = (2 * Math.PI * frequency) / audio.sampleRate;
  const coeff = 2 * Math.cos(omega);
  let s1 = 0;
  let s2 = 0;
  let energy = 0;
  for (const x of part) {
    const s0 = x + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
    energy += x * x;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  // A sinusoid of amplitude A over N samples gives power (A·N/2)² and energy A²·N/2: the ratio is N/2 for a pure tone.
  return energy === 0 ? 0 : power / energy / (part.length / 2);
}

/** A WAV file (16-bit PCM mono) of the given samples, pieces one after another. */
export function pcm16Wav(samples: readonly Int16Array[], sampleRate: number): Buffer {
  const count = samples.reduce((n, s) => n + s.length, 0);
  const wav = Buffer.alloc(44 + count * 2);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + count * 2, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(count * 2, 40);
  let offset = 44;
  for (const part of samples) for (const s of part) offset = wav.writeInt16LE(s, offset);
  return wav;
}

/** A WAV file (16-bit PCM mono) holding a sine tone, as an intro or outro a user might link to. */
export function toneWav(frequency: number, seconds: number, sampleRate = 44_100, amplitude = 0.5): Buffer {
  const tone = new Int16Array(Math.round(seconds * sampleRate));
  for (let i = 0; i < tone.length; i++)
    tone[i] = Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * amplitude * 32767);
  return pcm16Wav([tone], sampleRate);
}
