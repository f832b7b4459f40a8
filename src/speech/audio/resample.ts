// Sample-rate conversion with the Speex resampler (SpeexDSP, compiled to WebAssembly), for intro and outro audio.
import { concatenated } from './audio';

interface SpeexModule {
  _malloc(size: number): number;
  _free(pointer: number): void;
  _speex_resampler_init(
    channels: number,
    inRate: number,
    outRate: number,
    quality: number,
    errorPointer: number,
  ): number;
  _speex_resampler_process_float(
    state: number,
    channel: number,
    input: number,
    inputLength: number,
    output: number,
    outputLength: number,
  ): number;
  _speex_resampler_skip_zeros(state: number): number;
  _speex_resampler_get_output_latency(state: number): number;
  _speex_resampler_destroy(state: number): void;
  HEAPF32: Float32Array;
  HEAPU32: Uint32Array;
}

let modulePromise: Promise<SpeexModule> | undefined;

function loadSpeex(): Promise<SpeexModule> {
  modulePromise ??= (async () => {
    const factory = (await import('@echogarden/speex-resampler-wasm')).default as unknown as () => Promise<SpeexModule>;
    return factory();
  })();
  return modulePromise;
}

/** Quality 0..10; 7 is transparent for speech and music at a fraction of the cost of 10. */
const QUALITY = 7;
const CHUNK = 16384;

/**
 * A resampler fed in chunks: each `push` returns the output for what it has taken so far, `end` flushes the filter's
 * tail. Memory stays at one chunk in and one out, whatever the length of the audio, so a long or low-rate clip never
 * has to exist whole at the source rate and at the target rate at once. `close` frees the WebAssembly memory and
 * must be called (after `end`, or on an error).
 */
export class StreamResampler {
  private readonly outCapacity: number;
  private readonly input: number;
  private readonly output: number;
  private readonly lengths: number;
  private closed = false;

  private constructor(
    private readonly speex: SpeexModule,
    private readonly state: number,
    private readonly fromRate: number,
    private readonly toRate: number,
  ) {
    this.outCapacity = Math.ceil((CHUNK * toRate) / fromRate) + 64;
    this.input = speex._malloc(CHUNK * 4);
    this.output = speex._malloc(this.outCapacity * 4);
    this.lengths = speex._malloc(8);
    speex._speex_resampler_skip_zeros(state);
  }

  static async create(fromRate: number, toRate: number): Promise<StreamResampler> {
    const speex = await loadSpeex();
    const errorPointer = speex._malloc(4);
    const state = speex._speex_resampler_init(1, fromRate, toRate, QUALITY, errorPointer);
    speex._free(errorPointer);
    if (!state) throw new Error(`Cannot resample from ${fromRate} Hz to ${toRate} Hz`);
    return new StreamResampler(speex, state, fromRate, toRate);
  }

  /** Takes `samples` and returns the output they produced (a new array each time). */
  push(samples: Float32Array): Float32Array {
    if (this.closed) throw new Error('The resampler is closed');
    const { speex, input, output, lengths } = this;
    const parts: Float32Array[] = [];
    for (let offset = 0; offset < samples.length;) {
      const length = Math.min(CHUNK, samples.length - offset);
      // The heap views are read anew each time: a growing WebAssembly memory detaches the old ones.
      speex.HEAPF32.set(samples.subarray(offset, offset + length), input >> 2);
      speex.HEAPU32[lengths >> 2] = length;
      speex.HEAPU32[(lengths >> 2) + 1] = this.outCapacity;
      speex._speex_resampler_process_float(this.state, 0, input, lengths, output, lengths + 4);
      const consumed = speex.HEAPU32[lengths >> 2]!;
      const produced = speex.HEAPU32[(lengths >> 2) + 1]!;
      parts.push(speex.HEAPF32.slice(output >> 2, (output >> 2) + produced));
      offset += consumed;
      if (consumed === 0) break;
    }
    return concatenated(parts, Float32Array);
  }

  /** Feeds zeros after the input to flush the filter's delayed tail out, and returns that tail. */
  end(): Float32Array {
    const latency = this.speex._speex_resampler_get_output_latency(this.state);
    return this.push(new Float32Array(Math.ceil((latency * this.fromRate) / this.toRate) + 64));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.speex._free(this.input);
    this.speex._free(this.output);
    this.speex._free(this.lengths);
    this.speex._speex_resampler_destroy(this.state);
  }
}

/** Resamples one channel held whole; returns the input when the rates match. */
export async function resample(samples: Float32Array, fromRate: number, toRate: number): Promise<Float32Array> {
  if (fromRate === toRate) return samples;
  const expected = Math.round((samples.length * toRate) / fromRate);
  const result = new Float32Array(expected);
  let written = 0;
  const append = (part: Float32Array) => {
    const room = Math.min(part.length, result.length - written);
    result.set(part.subarray(0, room), written);
    written += room;
  };
  const resampler = await StreamResampler.create(fromRate, toRate);
  try {
    append(resampler.push(samples));
    append(resampler.end());
  } finally {
    resampler.close();
  }
  return written === result.length ? result : result.subarray(0, written);
}
