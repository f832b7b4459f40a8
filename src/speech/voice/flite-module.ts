// Flite as a WebAssembly module whose memory is supplied by the caller instead of created by each instance.
//
// A WASI program runs once, so every utterance needs a fresh instance. With the module's own memory, each instance
// left a dead 16+ MB memory behind, which V8 frees only on a full collection; a forced collection per utterance kept
// memory flat but made synthesis up to 2.7 times slower (kal16). Importing the memory lets a worker hand the same
// memory to every instance: nothing is left behind, and the worker's memory stays at one Flite's worth.
//
// The rewrite is small and checked: the module's one memory definition (section 5) becomes an import
// `env.memory` with the same limits (section 2), so memory index 0 and every instruction stay the same.
import { concatenated } from '../audio/audio';

export interface MemoryLimits {
  initial: number;
  maximum?: number;
}

function readLeb(bytes: Uint8Array, offset: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  let byte: number;
  let next = offset;
  do {
    byte = bytes[next++]!;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return { value, next };
}

function leb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    out.push(byte);
  } while (value > 0);
  return out;
}

function section(id: number, body: Uint8Array): Uint8Array {
  const header = Uint8Array.from([id, ...leb(body.length)]);
  const out = new Uint8Array(header.length + body.length);
  out.set(header);
  out.set(body, header.length);
  return out;
}

/** Returns the module bytes with its memory imported as `env.memory`, and that memory's limits. */
export function withImportedMemory(wasm: Uint8Array): { bytes: Uint8Array; limits: MemoryLimits } {
  const parts: Uint8Array[] = [wasm.subarray(0, 8)];
  let offset = 8;
  let importBody: Uint8Array | undefined;
  let importIndex = -1;
  let limits: MemoryLimits | undefined;
  let limitBytes: Uint8Array | undefined;
  while (offset < wasm.length) {
    const start = offset;
    const id = wasm[offset]!;
    const { value: size, next } = readLeb(wasm, offset + 1);
    const body = wasm.subarray(next, next + size);
    offset = next + size;
    if (id === 2) {
      importBody = body;
      importIndex = parts.length;
      parts.push(new Uint8Array());
      continue;
    }
    if (id === 5) {
      const count = readLeb(body, 0);
      if (count.value !== 1) throw new Error('The speech synthesizer module has more than one memory.');
      const flags = body[count.next]!;
      if (flags & ~1) throw new Error('The speech synthesizer module has a shared or 64-bit memory.');
      const initial = readLeb(body, count.next + 1);
      const maximum = flags & 1 ? readLeb(body, initial.next) : undefined;
      limits = { initial: initial.value, ...(maximum ? { maximum: maximum.value } : {}) };
      limitBytes = body.subarray(count.next, (maximum ?? initial).next);
      continue;
    }
    parts.push(wasm.subarray(start, offset));
  }
  if (!importBody || !limits || !limitBytes)
    throw new Error('The speech synthesizer module has no memory or no imports to rewrite.');
  const count = readLeb(importBody, 0);
  const name = (text: string) => [...leb(text.length), ...Buffer.from(text, 'utf8')];
  const entry = [...name('env'), ...name('memory'), 0x02, ...limitBytes];
  const rest = importBody.subarray(count.next);
  const newBody = Uint8Array.from([...leb(count.value + 1), ...rest, ...entry]);
  parts[importIndex] = section(2, newBody);
  return { bytes: concatenated(parts, Uint8Array), limits };
}
