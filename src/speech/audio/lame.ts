// LAME 3.100 in WebAssembly, built by this repository (vendor/lame: build.sh, lame-glue.c) because no LAME on npm
// exposes LAME's quality setting: quality 7 (no noise shaping, no best-Huffman search) encodes the engine's speech for
// half the CPU of LAME's default 3, which the npm builds use, but needs more bits for the same word error (BENCHMARKS.md,
// "Issue 14, third round"). One instance per encoder; it imports nothing but four WASI calls that only LAME's unused
// stdio reaches.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { concatenated } from './audio';

/**
 * LAME's quality setting unless a model asks for another (`lameQuality` in script.ts): 0 is best and slowest, 3 is
 * LAME's own default, 7 and up the fastest (7 = 8 = 9: no noise shaping, no best-Huffman search).
 */
export const LAME_QUALITY = 3;

/** Samples per call into LAME: bounds the WebAssembly memory (which never shrinks) whatever one write holds. */
const CHUNK = 65_536;

interface LameExports {
  memory: { readonly buffer: ArrayBuffer };
  _initialize(): void;
  enc_init(sampleRate: number, kbps: number, quality: number): number;
  enc_input(encoder: number, samples: number): number;
  enc_output(encoder: number): number;
  enc_encode(encoder: number, samples: number): number;
  enc_flush(encoder: number): number;
  enc_delay(encoder: number): number;
  enc_free(encoder: number): void;
}

function wasmPath(): string {
  // From sources (tests, benchmarks) the committed build; a bundle finds the copy esbuild.mjs puts beside it.
  const here = path.dirname(__filename);
  if (__filename.endsWith('.ts')) return path.join(here, '..', '..', '..', 'vendor', 'lame', 'lame.wasm');
  return path.join(here, 'lame.wasm');
}

let compiled: Promise<WebAssembly.Module> | undefined;

function lameModule(): Promise<WebAssembly.Module> {
  compiled ??= readFile(wasmPath()).then((bytes) => WebAssembly.compile(bytes));
  return compiled;
}

/** WASI as far as LAME can reach it: writes go nowhere (messages are silenced in the glue), an exit is an error. */
const EBADF = 8;
const wasi = {
  fd_write: () => EBADF,
  fd_seek: () => EBADF,
  fd_close: () => EBADF,
  proc_exit: (code: number) => {
    throw new Error(`LAME stopped (exit code ${code}).`);
  },
};

/** A mono, constant-bitrate MP3 encoder: Float32 samples (-1 to 1) in, MP3 frames out. */
export class LameEncoder {
  private closed = false;

  private constructor(
    private readonly lame: LameExports,
    private readonly encoder: number,
  ) {}

  static async create(sampleRate: number, kbps: number, quality = LAME_QUALITY): Promise<LameEncoder> {
    const instance = await WebAssembly.instantiate(await lameModule(), { wasi_snapshot_preview1: wasi });
    const lame = instance.exports as unknown as LameExports;
    lame._initialize();
    const encoder = lame.enc_init(sampleRate, kbps, quality);
    if (!encoder) throw new Error(`LAME cannot encode ${sampleRate} Hz mono at ${kbps} kbps.`);
    return new LameEncoder(lame, encoder);
  }

  /** Samples LAME puts before the first input sample (lame_get_encoder_delay). */
  get delay(): number {
    return this.lame.enc_delay(this.encoder);
  }

  /** Encodes the samples; returns the bytes LAME gives back now (whole and partial frames), owned by the caller. */
  encode(samples: Float32Array): Uint8Array {
    const outputs: Uint8Array[] = [];
    for (let at = 0; at < samples.length; at += CHUNK) {
      const chunk = samples.subarray(at, Math.min(samples.length, at + CHUNK));
      const input = this.lame.enc_input(this.encoder, chunk.length);
      if (!input) throw new Error('LAME could not allocate its input buffer.');
      new Float32Array(this.lame.memory.buffer, input, chunk.length).set(chunk);
      outputs.push(this.output(this.lame.enc_encode(this.encoder, chunk.length)));
    }
    return concatenated(outputs, Uint8Array);
  }

  /** The last frames (LAME pads the end to a whole frame). */
  flush(): Uint8Array {
    return this.output(this.lame.enc_flush(this.encoder));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.lame.enc_free(this.encoder);
  }

  private output(length: number): Uint8Array {
    if (length < 0) throw new Error(`LAME failed to encode (error ${length}).`);
    // A copy: the next call reuses LAME's buffer, and memory growth detaches views of the old one.
    return new Uint8Array(this.lame.memory.buffer, this.lame.enc_output(this.encoder), length).slice();
  }
}
