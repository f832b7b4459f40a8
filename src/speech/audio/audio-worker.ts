// A job's audio worker thread: everything done to audio after synthesis happens here, off the engine's main thread
// (which only serves HTTP, events and files): trimming, levelling, pauses, MP3 encoding (LAME, in this thread) and
// cutting the encoded stream into parts. Requests are handled strictly in order. One job at a time: `open` starts a
// job's state afresh and `release` drops it, so the engine can keep the thread, warm, for its next job (job-audio.ts).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { traceMemory } from '../threads/memory-trace';
import { parentPort } from 'node:worker_threads';
import { concatenated, int16ToFloat, silence, trimSilence } from './audio';
import { id3Tag } from './id3';
import { levelToLoudness } from './loudness';
import { resample } from './resample';
import type {
  AudioFinished,
  AudioReleased,
  AudioRequest,
  AudioResponse,
  LineWritten,
  PartFile,
} from './audio-protocol';
import { wholeFrames } from './mp3-frames';
import { Mp3Writer } from './mp3-writer';
import { applyThreadPriority } from '../threads/thread-priority';

/** The job's open file: undefined once it is finished or aborted (and before the first `open`). */
let writer: Mp3Writer | undefined;
let partsDir = '';
let sampleRate = 16_000;
let targets: number[] = [];
/** Encoded bytes appended since the last part. */
let pending: Uint8Array[] = [];
let partIndex = 0;
/** Samples of encoded frames already in parts. */
let partSamples = 0;
let lastCutS = 0;
/** Samples per frame of the stream (576 for the MPEG-2 rates used here; known from the first frame). */
let frameSamples = 576;
/**
 * Frames LAME may still hold back after its input: its delay and look-ahead (about 1,700 samples) in frames, with room
 * to spare. A part ends this many frames before the end of its input, so where it ends depends only on the input,
 * never on how far the encoder thread had got: a run after a crash cuts the same parts, byte for byte.
 */
const HELD_BACK_FRAMES = 6;

// Memory (issue 14: the engine under 250 MB on a 99k-character podcast). Each line's samples arrive from a synthesis
// worker as a transferred buffer; this thread's own heap stays small, so V8 never collects for it and, on its own,
// frees those buffers only once 64 MB of them have gathered (its external-memory limit): that was 50+ MB of the
// engine's peak. So the line's work reuses buffers of this thread (floats, filter, silence), and a full collection
// of this thread's few-MB heap runs whenever GARBAGE_BUDGET bytes of buffers have gathered since the last one
// (measured 70-140 ms of wall time at load 15-20, about every 4 minutes of audio; never per line).
const GARBAGE_BUDGET = 8 * 1024 * 1024;
/** Lines longer than this (65 s at 16 kHz) get buffers of their own instead of growing the reused ones. */
const REUSED_SAMPLES_MAX = 1 << 20;
let floats = new Float32Array(0);
let filtered = new Float64Array(0);
let zeros = new Float32Array(0);
let collect: (() => void) | undefined;
/** The first check takes the base, so no collection delays the first lines (the first part waits for them). */
let externalAfterCollect = Number.POSITIVE_INFINITY;

/** Grows the reused buffers to hold `length` samples (up to the cap; a longer line allocates its own). */
function reserve(length: number): void {
  if (length <= floats.length || length > REUSED_SAMPLES_MAX) return;
  const size = Math.min(REUSED_SAMPLES_MAX, Math.max(length, Math.ceil(floats.length * 1.5)));
  floats = new Float32Array(size);
  filtered = new Float64Array(size);
}

/** Silence from one zeroed buffer: the encoder only reads what it is given. */
function quiet(seconds: number): Float32Array {
  const length = Math.max(0, Math.round(seconds * sampleRate));
  if (length > REUSED_SAMPLES_MAX) return silence(seconds, sampleRate);
  if (length > zeros.length) zeros = new Float32Array(length);
  return zeros.subarray(0, length);
}

/** V8's own gc(), obtained once: node exposes it only with --expose-gc, which can be set for a moment. */
function fullCollection(): () => void {
  v8.setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}

function collectIfDue(): void {
  // `external` is what V8 itself weighs, the transferred buffers included. It falls only once the collector's
  // concurrent sweep has freed them, so the lowest figure seen since the last collection is the base.
  const { external } = process.memoryUsage();
  externalAfterCollect = Math.min(externalAfterCollect, external);
  if (external - externalAfterCollect < GARBAGE_BUDGET) return;
  collect ??= fullCollection();
  collect();
  externalAfterCollect = process.memoryUsage().external;
}

function onFrames(data: Uint8Array): void {
  if (targets.length > 0) pending.push(data);
}

function pendingBytes(): Uint8Array {
  const bytes = concatenated(pending, Uint8Array);
  pending = [bytes];
  return bytes;
}

/** Closes a part: `frames` more frames (all of what is encoded when undefined, at the end). */
async function cutPart(frames?: number): Promise<PartFile | undefined> {
  if (targets.length === 0) {
    pending = [];
    return undefined;
  }
  const bytes = pendingBytes();
  if (bytes.length === 0) return undefined;
  const framesOut = wholeFrames(bytes, frames);
  pending = framesOut.bytes < bytes.length ? [bytes.slice(framesOut.bytes)] : [];
  if (framesOut.samples === 0) return undefined;
  if (framesOut.frames > 0) frameSamples = framesOut.samples / framesOut.frames;
  const name = `part-${String(partIndex).padStart(4, '0')}.mp3`;
  await writeFile(path.join(partsDir, name), bytes.subarray(framesOut.skip, framesOut.bytes));
  const part: PartFile = {
    index: partIndex,
    name,
    startS: partSamples / sampleRate,
    durationS: framesOut.samples / sampleRate,
    bytes: framesOut.bytes - framesOut.skip,
  };
  partIndex++;
  partSamples += framesOut.samples;
  return part;
}

async function handle(request: AudioRequest): Promise<LineWritten | AudioFinished | AudioReleased | undefined> {
  switch (request.op) {
    case 'open':
      await closeWriter();
      // A kept thread's previous job left its state: this job's starts from nothing.
      sampleRate = request.sampleRate;
      partsDir = request.partsDir;
      targets = request.partTargetsS;
      pending = [];
      partIndex = 0;
      partSamples = 0;
      lastCutS = 0;
      frameSamples = 576;
      await mkdir(partsDir, { recursive: true });
      writer = await Mp3Writer.create(request.path, request.sampleRate, request.bitrate, {
        onFrames,
        quality: request.quality,
      });
      return undefined;
    case 'clip':
      await writer!.write(request.samples);
      return undefined;
    case 'silence':
      await writer!.write(quiet(request.seconds));
      return undefined;
    case 'line': {
      reserve(request.samples.length);
      const whole = int16ToFloat(request.samples, floats);
      const voiced = trimSilence(whole, request.sampleRate);
      const trimmedS = (voiced.byteOffset - whole.byteOffset) / Float32Array.BYTES_PER_ELEMENT / request.sampleRate;
      levelToLoudness(voiced, request.sampleRate, undefined, filtered);
      // Up to the stream's rate when it is higher for intro and outro music (index.ts).
      const speech = await resample(voiced, request.sampleRate, sampleRate);
      if (request.pauseBeforeS > 0 && writer!.durationS > 0) await writer!.write(quiet(request.pauseBeforeS));
      const start = writer!.durationS;
      await writer!.write(speech);
      const end = writer!.durationS;
      await writer!.write(quiet(request.pauseAfterS));
      const target = targets[Math.min(partIndex, targets.length - 1)] ?? Infinity;
      let part: PartFile | undefined;
      if (writer!.durationS - lastCutS >= target) {
        const inputFrames = Math.floor((writer!.durationS * sampleRate) / frameSamples);
        const frames = inputFrames - HELD_BACK_FRAMES - Math.round(partSamples / frameSamples);
        if (frames > 0) part = await cutPart(frames);
      }
      if (part) lastCutS = writer!.durationS;
      collectIfDue();
      return { start, end, trimmedS, ...(part ? { part } : {}) };
    }
    case 'finish': {
      const tags = request.tags;
      // Finishing closes the file whether it succeeds or not: nothing of it is left to abort.
      const finishing = writer!;
      writer = undefined;
      const bytes = await finishing.finish(tags ? id3Tag({ ...tags, durationS: finishing.durationS }) : undefined);
      // No targets: the caller takes no parts.
      const part = targets.length > 0 ? await cutPart() : undefined;
      return { durationS: finishing.durationS, bytes, ...(part ? { part } : {}) };
    }
    case 'abort':
      await closeWriter();
      return undefined;
    case 'release':
      return release();
  }
}

/** Closes a writer the job left open (aborted, failed, or a new `open` without a finish before it). */
async function closeWriter(): Promise<void> {
  const open = writer;
  writer = undefined;
  await open?.abort();
}

/**
 * The job is over: its writer, encoder and buffers are dropped and collected, so that a kept thread holds only its
 * code between jobs (the reused buffers grow to 12 MB on long lines, LAME's memory to a few MB).
 */
async function release(): Promise<AudioReleased> {
  await closeWriter();
  pending = [];
  floats = new Float32Array(0);
  filtered = new Float64Array(0);
  zeros = new Float32Array(0);
  collect ??= fullCollection();
  collect();
  const { heapUsed, external } = process.memoryUsage();
  externalAfterCollect = external;
  return { heapBytes: heapUsed + external };
}

applyThreadPriority();
let queue: Promise<void> = Promise.resolve();
parentPort!.on('message', (request: AudioRequest) => {
  queue = queue.then(async () => {
    let response: AudioResponse;
    try {
      const result = await handle(request);
      response = { seq: request.seq, ok: true, ...(result ? { result } : {}) };
    } catch (error) {
      const code = (error as { code?: unknown } | undefined)?.code;
      response = {
        seq: request.seq,
        ok: false,
        error: error instanceof Error ? error.message : String(error),
        ...(typeof code === 'string' ? { code } : {}),
      };
    }
    parentPort!.postMessage(response);
  });
});

traceMemory('audio');
