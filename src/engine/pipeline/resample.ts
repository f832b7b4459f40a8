// Sample-rate conversion with the Speex resampler (SpeexDSP, compiled to WebAssembly), for intro and outro audio.

interface SpeexModule {
  _malloc(size: number): number;
  _free(pointer: number): void;
  _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errorPointer: number): number;
  _speex_resampler_process_float(state: number, channel: number, input: number, inputLength: number, output: number, outputLength: number): number;
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

/** Resamples one channel; returns the input when the rates match. */
export async function resample(samples: Float32Array, fromRate: number, toRate: number): Promise<Float32Array> {
  if (fromRate === toRate) return samples;
  const speex = await loadSpeex();
  const errorPointer = speex._malloc(4);
  const state = speex._speex_resampler_init(1, fromRate, toRate, QUALITY, errorPointer);
  speex._free(errorPointer);
  if (!state) throw new Error(`Cannot resample from ${fromRate} Hz to ${toRate} Hz`);
  const outCapacity = Math.ceil((CHUNK * toRate) / fromRate) + 64;
  const input = speex._malloc(CHUNK * 4);
  const output = speex._malloc(outCapacity * 4);
  const lengths = speex._malloc(8);
  const expected = Math.round((samples.length * toRate) / fromRate);
  const result = new Float32Array(expected);
  let written = 0;
  // The filter delays its output; feeding zeros after the input flushes the tail out.
  const latency = speex._speex_resampler_get_output_latency(state);
  const flush = new Float32Array(Math.ceil((latency * fromRate) / toRate) + 64);
  const append = (count: number) => {
    const view = speex.HEAPF32.subarray(output >> 2, (output >> 2) + count);
    const room = Math.min(count, result.length - written);
    result.set(view.subarray(0, room), written);
    written += room;
  };
  try {
    speex._speex_resampler_skip_zeros(state);
    for (const source of [samples, flush]) {
      for (let offset = 0; offset < source.length; ) {
        const length = Math.min(CHUNK, source.length - offset);
        speex.HEAPF32.set(source.subarray(offset, offset + length), input >> 2);
        speex.HEAPU32[lengths >> 2] = length;
        speex.HEAPU32[(lengths >> 2) + 1] = outCapacity;
        speex._speex_resampler_process_float(state, 0, input, lengths, output, lengths + 4);
        const consumed = speex.HEAPU32[lengths >> 2]!;
        append(speex.HEAPU32[(lengths >> 2) + 1]!);
        offset += consumed;
        if (consumed === 0) break;
      }
    }
  } finally {
    speex._free(input);
    speex._free(output);
    speex._free(lengths);
    speex._speex_resampler_destroy(state);
  }
  return written === result.length ? result : result.subarray(0, written);
}
