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

/** The module's sections after its 8-byte header: id, body, and the whole section (header included). */
function* sections(wasm: Uint8Array): Generator<{ id: number; body: Uint8Array; whole: Uint8Array }> {
  let offset = 8;
  while (offset < wasm.length) {
    const start = offset;
    const { value: size, next } = readLeb(wasm, offset + 1);
    offset = next + size;
    yield { id: wasm[start]!, body: wasm.subarray(next, offset), whole: wasm.subarray(start, offset) };
  }
}

function readLimits(bytes: Uint8Array, offset: number): { limits: MemoryLimits; next: number } {
  const flags = bytes[offset]!;
  const initial = readLeb(bytes, offset + 1);
  const maximum = flags & 1 ? readLeb(bytes, initial.next) : undefined;
  return {
    limits: { initial: initial.value, ...(maximum ? { maximum: maximum.value } : {}) },
    next: (maximum ?? initial).next,
  };
}

/**
 * The limits of the module's `env.memory` import, when its import section (id 2) has one: a module rewritten
 * already (the build writes dist/flite.wasm so). Only the section headers and the import entries are read.
 */
function importedMemoryLimits(wasm: Uint8Array): MemoryLimits | undefined {
  for (const { id, body } of sections(wasm)) {
    if (id !== 2) continue;
    const count = readLeb(body, 0);
    let at = count.next;
    const name = () => {
      const length = readLeb(body, at);
      at = length.next + length.value;
      return Buffer.from(body.subarray(length.next, at)).toString('utf8');
    };
    for (let i = 0; i < count.value; i++) {
      const module = name();
      const field = name();
      const kind = body[at++]!;
      switch (kind) {
        case 0: // function: its type
          at = readLeb(body, at).next;
          break;
        case 1: // table: element type, limits
          at = readLimits(body, at + 1).next;
          break;
        case 2: {
          const memory = readLimits(body, at);
          if (module === 'env' && field === 'memory') return memory.limits;
          at = memory.next;
          break;
        }
        case 3: // global: value type, mutability
          at += 2;
          break;
        case 4: // tag: attribute, type
          at = readLeb(body, at + 1).next;
          break;
        default:
          throw new Error(`The speech synthesizer module has an import of unknown kind ${kind}.`);
      }
    }
    return undefined;
  }
  return undefined;
}

/**
 * Returns the module bytes with its memory imported as `env.memory`, and that memory's limits. A module that imports
 * it already (dist/flite.wasm, rewritten by esbuild.mjs at build time) is returned as it is: the rewrite copies 21 MB,
 * about 80 ms of an engine's start.
 */
export function withImportedMemory(wasm: Uint8Array): { bytes: Uint8Array; limits: MemoryLimits } {
  const imported = importedMemoryLimits(wasm);
  if (imported) return { bytes: wasm, limits: imported };
  const parts: Uint8Array[] = [wasm.subarray(0, 8)];
  let importBody: Uint8Array | undefined;
  let importIndex = -1;
  let limits: MemoryLimits | undefined;
  let limitBytes: Uint8Array | undefined;
  for (const { id, body, whole } of sections(wasm)) {
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
      const read = readLimits(body, count.next);
      limits = read.limits;
      limitBytes = body.subarray(count.next, read.next);
      continue;
    }
    parts.push(whole);
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
