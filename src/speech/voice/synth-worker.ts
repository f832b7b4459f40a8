// A speech synthesis worker thread: Flite compiled to WebAssembly (WASI), one utterance per request. The module is
// compiled once per worker; each utterance gets a fresh instance (a WASI program runs once), which costs a few
// milliseconds against tens to hundreds of milliseconds of synthesis. Flite's files (input line, lexicon addendum,
// output WAV) and its standard output live in memory (memory-wasi.ts): an utterance opens no host file or descriptor.
import { traceMemory } from '../threads/memory-trace';
import { parentPort, workerData } from 'node:worker_threads';
import { fliteLexicon } from '../text/normalize/lexicon';
import { MemoryFile, MemoryWasi, WASI_DIR } from './memory-wasi';
import { bendPitch, bendsFor, needsSegments, placeLastUtterance, utterancesOf } from './pitch';
import type { Segment, SynthesisRequest, SynthesisResponse } from './synth-protocol';
import type { WordTiming } from './voice';
import { groupingInput, PhoneCounts, phoneGroups, placeUtterances, spokenTokens, wordTimes } from './word-times';
import { applyThreadPriority } from '../threads/thread-priority';

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
const modulePromise = Promise.resolve(sharedModule);
/**
 * Flite's directory. The lexicon addendum (pronunciations Flite's lexicon gets wrong, normalize/lexicon.ts) is
 * encoded once; the WAV file's buffer is kept from utterance to utterance (a new buffer per utterance was garbage that
 * this thread's small heap let gather, up to 12 MB per worker, before V8 collected it).
 */
const files = new Map<string, MemoryFile>([
  ['lex.txt', new MemoryFile(Buffer.from(fliteLexicon(), 'utf8'), false)],
  ['out.wav', new MemoryFile()],
]);

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

/**
 * One run of Flite: the line's samples, and its -psdur output when asked for. `input` replaces the line as Flite
 * reads it (the grouping run of word-times.ts), `voice` and `durationStretch` the request's.
 */
async function runFlite(
  text: string,
  request: SynthesisRequest,
  psdur: boolean,
  override: { input?: string; voice?: SynthesisRequest['voice']; durationStretch?: number } = {},
): Promise<{ samples: Int16Array; sampleRate: number; psdur?: string }> {
  const module = await modulePromise;
  // A fresh instance starts from zeroed memory (its zero-initialized data is not in its data segments); the data
  // segments are written again when it is instantiated.
  new Uint8Array(memory.buffer).fill(0);
  // Text goes through a file: long argv text crashes Flite. Flite splits a line into utterances at ".", ":" and "?",
  // and drops the last piece of an unterminated line when it is a single word ("The answer is simple: patience."
  // came out as "The answer is simple:"), so every line reaches it as one line, ended.
  files.set('in.txt', new MemoryFile(Buffer.from(override.input ?? fliteInput(text), 'utf8'), false));
  files.get('out.wav')!.truncate();
  const args = [
    'flite',
    '-voice',
    override.voice ?? request.voice,
    '-add_lex',
    `${WASI_DIR}/lex.txt`,
    '-f',
    `${WASI_DIR}/in.txt`,
    '-o',
    `${WASI_DIR}/out.wav`,
  ];
  const stretch = override.durationStretch ?? request.durationStretch;
  if (stretch && stretch !== 1) args.push('--setf', `duration_stretch=${stretch}`);
  if (request.pitchMean) args.push('--setf', `int_f0_target_mean=${request.pitchMean}`);
  if (request.pitchSpread) args.push('--setf', `int_f0_target_stddev=${request.pitchSpread}`);
  // -psdur prints the segments on standard output (word timings, checks and intonation ask).
  if (psdur) args.splice(1, 0, '-psdur');
  const wasi = new MemoryWasi(args, files, memory);
  const instance = await WebAssembly.instantiate(module, {
    wasi_snapshot_preview1: wasi.imports(),
    env: { memory },
  });
  const code = wasi.start(instance);
  if (code !== 0) throw new Error(`Flite exited with code ${code}${stderrOf(wasi)}`);
  const out = files.get('out.wav')!.content();
  const wav = readWav(Buffer.from(out.buffer, out.byteOffset, out.byteLength));
  return psdur ? { ...wav, psdur: wasi.stdout.text() } : wav;
}

/** Flite's own words on standard error, for the error message. */
function stderrOf(wasi: MemoryWasi): string {
  const text = wasi.stderr.text().trim().slice(0, 300);
  return text ? `: ${text}` : '';
}

/** Phone counts of the tokens this worker has grouped (word-times.ts). */
const phoneCounts = new PhoneCounts();

/**
 * The line's word timings (word-times.ts): its own segments, grouped by word with the tokens' phone counts, from a
 * run in kal16 of the tokens not met yet, each ended by a comma, at a twentieth of their length; when those counts
 * do not fit the line, from such a run of the whole line.
 */
async function timeWords(
  text: string,
  request: SynthesisRequest,
  psdur: string,
  seconds: number,
): Promise<WordTiming[] | undefined> {
  const tokens = spokenTokens(text);
  if (tokens.length === 0) return undefined;
  const placed = placeUtterances(utterancesOf(psdur), seconds);
  if (!placed) return undefined;
  const group = async (input: string) =>
    utterancesOf((await runFlite(text, request, true, { input, voice: 'kal16', durationStretch: 0.05 })).psdur ?? '');
  const remembered = await phoneCounts.of(tokens, group);
  const words = remembered ? wordTimes(tokens, remembered, placed) : undefined;
  if (words) return words;
  const whole = phoneGroups(await group(groupingInput(tokens))).map((g) => g.length);
  return wordTimes(tokens, whole, placed);
}

async function synthesize(
  request: SynthesisRequest,
): Promise<{ samples: Int16Array; sampleRate: number; segments?: Segment[]; words?: WordTiming[] }> {
  const { intonation } = request;
  const timed = intonation !== undefined && needsSegments(intonation);
  const { samples, sampleRate, psdur } = await runFlite(
    request.text,
    request,
    Boolean(request.segments) || Boolean(request.words) || timed,
  );
  const segments = request.segments ? parseSegments(psdur ?? '') : undefined;
  const seconds = samples.length / sampleRate;
  const words = request.words ? await timeWords(request.text, request, psdur ?? '', seconds) : undefined;
  const extra = { ...(segments ? { segments } : {}), ...(words ? { words } : {}) };
  if (!intonation) return { samples, sampleRate, ...extra };
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
  return { samples: bent, sampleRate, ...extra };
}

applyThreadPriority();
parentPort!.on('message', (request: SynthesisRequest) => {
  synthesize(request).then(
    ({ samples, sampleRate, segments, words }) => {
      const response: SynthesisResponse = {
        id: request.id,
        ok: true,
        samples,
        sampleRate,
        ...(segments ? { segments } : {}),
        ...(words ? { words } : {}),
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

traceMemory('synth');
