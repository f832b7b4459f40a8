// A speech synthesis worker thread: Flite compiled to WebAssembly (WASI), one utterance per request. The module is
// compiled once per worker; each utterance gets a fresh instance (a WASI program runs once), which costs a few
// milliseconds against tens to hundreds of milliseconds of synthesis.
import {
  closeSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { traceMemory } from '../threads/memory-trace';
import { parentPort, workerData } from 'node:worker_threads';
import { SCRATCH_PREFIX } from './scratch-dirs';
import { fliteLexicon } from '../text/normalize/lexicon';
import { bendPitch, bendsFor, needsSegments, placeLastUtterance, utterancesOf } from './pitch';
import type { Segment, SynthesisRequest, SynthesisResponse } from './synth-protocol';
import { lowerThisThreadsPriority } from '../threads/thread-priority';

// node:wasi announces itself as experimental on load; that line would land in every engine log.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
  if (String(warning).includes('WASI')) return;
  (emitWarning as (w: string | Error, ...r: unknown[]) => void)(warning, ...rest);
};
// eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports
const { WASI } = require('node:wasi') as typeof import('node:wasi');

// The pool compiles Flite once and shares the compiled module with every worker (the machine code is shared, not
// copied: each worker compiling its own would cost tens of megabytes more per worker). The module imports its memory
// (flite-module.ts): this worker makes one and hands it to every instance, so no dead instance's memory is left for
// the garbage collector (a forced full collection per utterance made kal16 up to 2.7 times slower).
const { module: sharedModule, memoryLimits } = workerData as {
  module: WebAssembly.Module;
  memoryLimits: { initial: number; maximum?: number };
};
// Node's type declarations leave WebAssembly.Memory out; the global is there in every Node and Electron.
const { Memory } = WebAssembly as unknown as {
  Memory: new (limits: { initial: number; maximum?: number }) => { readonly buffer: ArrayBuffer };
};
const memory = new Memory(memoryLimits);
// The engine's pid in the name lets the next engine remove what a killed one left behind (scratch-dirs.ts).
const scratch = mkdtempSync(path.join(os.tmpdir(), `${SCRATCH_PREFIX}${process.pid}-`));
const modulePromise = Promise.resolve(sharedModule);
// Pronunciations Flite's lexicon gets wrong (normalize/lexicon.ts), read by Flite with each utterance.
const LEXICON_TEXT = fliteLexicon();

/**
 * Flite's WAV file, read into one buffer reused from utterance to utterance. A new buffer per utterance was garbage
 * that this thread's small heap let gather (up to 12 MB per worker) before V8 collected it.
 */
let wavBuffer = Buffer.alloc(0);
function readOutput(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > wavBuffer.length) wavBuffer = Buffer.allocUnsafe(Math.max(size, Math.ceil(wavBuffer.length * 1.5)));
    let read = 0;
    while (read < size) {
      const count = readSync(fd, wavBuffer, read, size - read, read);
      if (count === 0) break;
      read += count;
    }
    return wavBuffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** The samples of a 16-bit PCM WAV file (Flite writes mono 16 kHz). */
function readWav(bytes: Buffer): { samples: Int16Array; sampleRate: number } {
  if (bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE')
    throw new Error('Flite did not write a WAV file');
  let offset = 12;
  let sampleRate = 16000;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'fmt ') sampleRate = bytes.readUInt32LE(offset + 12);
    if (id === 'data') {
      const end = Math.min(bytes.length, offset + 8 + size);
      const copy = new Int16Array((end - offset - 8) >> 1);
      for (let i = 0; i < copy.length; i++) copy[i] = bytes.readInt16LE(offset + 8 + i * 2);
      return { samples: copy, sampleRate };
    }
    offset += 8 + size + (size & 1);
  }
  throw new Error('The WAV file from Flite has no data');
}

/**
 * One line, ended with a newline: the form in which Flite says every word of it. The line's final punctuation goes
 * to Flite as a token of its own: attached to the last word, it made rms swallow that word's vowel now and then
 * ("… the same rule." gave "rule" a 29 ms vowel, "… rule ." 177 ms; "open the U R L." gave the L 38 ms, "L ." 152 ms).
 */
function fliteInput(text: string): string {
  const line = text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/([\p{L}\p{N}])([.!?;:,]+)$/u, '$1 $2');
  return `${line}\n`;
}

/** Flite's -psdur output: "pau:0.174 ih:0.294 …". */
function parseSegments(text: string): Segment[] {
  return [...text.matchAll(/([a-z]+):(\d+(?:\.\d+)?)/g)].map((m) => ({ phone: m[1]!, end: Number(m[2]) }));
}

/** One run of Flite: the line's samples, and its -psdur output when asked for. */
async function runFlite(
  text: string,
  request: SynthesisRequest,
  psdur: boolean,
): Promise<{ samples: Int16Array; sampleRate: number; psdur?: string }> {
  const module = await modulePromise;
  // A fresh instance starts from zeroed memory (its zero-initialized data is not in its data segments); the data
  // segments are written again when it is instantiated.
  new Uint8Array(memory.buffer).fill(0);
  // Text goes through a file: long argv text crashes Flite. Flite splits a line into utterances at ".", ":" and "?",
  // and drops the last piece of an unterminated line when it is a single word ("The answer is simple: patience."
  // came out as "The answer is simple:"), so every line reaches it as one line, ended.
  // Put back if a temp cleaner (or an engine that took this one for dead) removed it.
  mkdirSync(scratch, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(scratch, 'in.txt'), fliteInput(text));
  writeFileSync(path.join(scratch, 'lex.txt'), LEXICON_TEXT);
  const args = [
    'flite',
    '-voice',
    request.voice,
    '-add_lex',
    '/work/lex.txt',
    '-f',
    '/work/in.txt',
    '-o',
    '/work/out.wav',
  ];
  if (request.durationStretch && request.durationStretch !== 1)
    args.push('--setf', `duration_stretch=${request.durationStretch}`);
  if (request.pitchMean) args.push('--setf', `int_f0_target_mean=${request.pitchMean}`);
  if (request.pitchSpread) args.push('--setf', `int_f0_target_stddev=${request.pitchSpread}`);
  // -psdur prints the segments on standard output, which goes to a file here (only checks and intonation ask).
  const segmentsFile = path.join(scratch, 'segments.txt');
  const stdout = psdur ? openSync(segmentsFile, 'w') : undefined;
  if (psdur) args.splice(1, 0, '-psdur');
  const wasi = new WASI({
    version: 'preview1',
    args,
    env: {},
    preopens: { '/work': scratch },
    returnOnExit: true,
    ...(stdout !== undefined ? { stdout } : {}),
  });
  const instance = await WebAssembly.instantiate(module, {
    ...(wasi.getImportObject() as WebAssembly.Imports),
    env: { memory },
  });
  let code: number;
  try {
    code = wasi.start(instance);
  } finally {
    if (stdout !== undefined) closeSync(stdout);
  }
  if (code !== 0) throw new Error(`Flite exited with code ${code}`);
  const wav = readWav(readOutput(path.join(scratch, 'out.wav')));
  return psdur ? { ...wav, psdur: readFileSync(segmentsFile, 'utf8') } : wav;
}

async function synthesize(
  request: SynthesisRequest,
): Promise<{ samples: Int16Array; sampleRate: number; segments?: Segment[] }> {
  const { intonation } = request;
  const timed = intonation !== undefined && needsSegments(intonation);
  const { samples, sampleRate, psdur } = await runFlite(request.text, request, Boolean(request.segments) || timed);
  const segments = request.segments ? parseSegments(psdur ?? '') : undefined;
  if (!intonation) return { samples, sampleRate, ...(segments ? { segments } : {}) };
  const seconds = samples.length / sampleRate;
  const last = timed ? placeLastUtterance(utterancesOf(psdur ?? ''), seconds) : undefined;
  // The rise starts on the last word: how many phones it has, Flite tells when it says the word alone.
  const word =
    (intonation.rise || intonation.continues) && intonation.lastWord && last
      ? utterancesOf((await runFlite(intonation.lastWord, request, true)).psdur ?? '')[0]
      : undefined;
  const wordPhones = word?.filter((s) => s.phone !== 'pau').length;
  // So does the list's last item when no pause comes before it ("and plums"): the item before rises up to it.
  const item =
    intonation.lastItem && last
      ? utterancesOf((await runFlite(intonation.lastItem, request, true)).psdur ?? '')
      : undefined;
  // Said alone it must stay one utterance: the phones are matched against the end of the line's last one.
  const itemPhones = item?.length === 1 ? item[0]!.filter((s) => s.phone !== 'pau').map((s) => s.phone) : undefined;
  const bent = bendPitch(samples, sampleRate, bendsFor(intonation, last, wordPhones, seconds, itemPhones));
  return { samples: bent, sampleRate, ...(segments ? { segments } : {}) };
}

lowerThisThreadsPriority();
parentPort!.on('message', (request: SynthesisRequest) => {
  synthesize(request).then(
    ({ samples, sampleRate, segments }) => {
      const response: SynthesisResponse = {
        id: request.id,
        ok: true,
        samples,
        sampleRate,
        ...(segments ? { segments } : {}),
      };
      parentPort!.postMessage(response, [samples.buffer as ArrayBuffer]);
    },
    (error: unknown) => {
      const response: SynthesisResponse = {
        id: request.id,
        ok: false,
        error: error instanceof Error ? error.message : String(error),
      };
      parentPort!.postMessage(response);
    },
  );
});

process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

traceMemory('synth');
