// A job's audio worker thread: everything done to audio after synthesis happens here, off the engine's main thread
// (which only serves HTTP, events and files): trimming, levelling, pauses, MP3 encoding (LAME, in this thread) and
// cutting the encoded stream into parts. Requests are handled strictly in order.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { int16ToFloat, silence, trimSilence } from './audio';
import { id3Tag } from './id3';
import { levelToLoudness } from './loudness';
import { resample } from './resample';
import type { AudioFinished, AudioRequest, AudioResponse, LineWritten, PartFile } from './audio-protocol';
import { wholeFrames } from './mp3-frames';
import { Mp3Writer } from './mp3-writer';
import { lowerThisThreadsPriority } from './thread-priority';

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

function onFrames(data: Uint8Array): void {
  if (targets.length > 0) pending.push(data);
}

function pendingBytes(): Uint8Array {
  if (pending.length === 1) return pending[0]!;
  const total = pending.reduce((sum, chunk) => sum + chunk.length, 0);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of pending) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
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

async function handle(request: AudioRequest): Promise<LineWritten | AudioFinished | undefined> {
  switch (request.op) {
    case 'open':
      sampleRate = request.sampleRate;
      partsDir = request.partsDir;
      targets = request.partTargetsS;
      await mkdir(partsDir, { recursive: true });
      writer = await Mp3Writer.create(request.path, request.sampleRate, request.bitrate, { onFrames });
      return undefined;
    case 'clip':
      await writer!.write(request.samples);
      return undefined;
    case 'silence':
      await writer!.write(silence(request.seconds, sampleRate));
      return undefined;
    case 'line': {
      const voiced = trimSilence(int16ToFloat(request.samples), request.sampleRate);
      levelToLoudness(voiced, request.sampleRate);
      // Up to the stream's rate when it is higher for intro and outro music (index.ts).
      const speech = await resample(voiced, request.sampleRate, sampleRate);
      if (request.pauseBeforeS > 0 && writer!.durationS > 0)
        await writer!.write(silence(request.pauseBeforeS, sampleRate));
      const start = writer!.durationS;
      await writer!.write(speech);
      const end = writer!.durationS;
      await writer!.write(silence(request.pauseAfterS, sampleRate));
      const target = targets[Math.min(partIndex, targets.length - 1)] ?? Infinity;
      let part: PartFile | undefined;
      if (writer!.durationS - lastCutS >= target) {
        const inputFrames = Math.floor((writer!.durationS * sampleRate) / frameSamples);
        const frames = inputFrames - HELD_BACK_FRAMES - Math.round(partSamples / frameSamples);
        if (frames > 0) part = await cutPart(frames);
      }
      if (part) lastCutS = writer!.durationS;
      return { start, end, ...(part ? { part } : {}) };
    }
    case 'finish': {
      const tags = request.tags;
      const bytes = await writer!.finish(tags ? id3Tag({ ...tags, durationS: writer!.durationS }) : undefined);
      // No targets: the caller takes no parts.
      const part = targets.length > 0 ? await cutPart() : undefined;
      return { durationS: writer!.durationS, bytes, ...(part ? { part } : {}) };
    }
    case 'abort':
      await writer?.abort();
      return undefined;
  }
}

lowerThisThreadsPriority();
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
