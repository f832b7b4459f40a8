// Small signal-processing helpers for speech and for intro/outro audio, all on mono Float32 samples, and the one way
// the pipeline joins pieces of samples or bytes.

/** `into`, when given and long enough, receives the samples (its start is returned) instead of a new array. */
export function int16ToFloat(samples: Int16Array, into?: Float32Array): Float32Array {
  const out =
    into && into.length >= samples.length ? into.subarray(0, samples.length) : new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = samples[i]! / 32768;
  return out;
}

/** Root mean square over the parts that are not near-silence (so pauses do not make speech look quiet). */
export function activeRms(samples: Float32Array, sampleRate: number): number {
  const window = Math.max(1, Math.round(sampleRate * 0.02));
  const energies: number[] = [];
  for (let start = 0; start + window <= samples.length; start += window) {
    let sum = 0;
    for (let i = start; i < start + window; i++) sum += samples[i]! * samples[i]!;
    energies.push(sum / window);
  }
  if (energies.length === 0) return 0;
  // A loop, not Math.max(...energies): a long clip has more windows than a call can take arguments.
  let loudest = 0;
  for (const e of energies) if (e > loudest) loudest = e;
  const active = energies.filter((e) => e > loudest * 0.001);
  return Math.sqrt(active.reduce((a, b) => a + b, 0) / Math.max(1, active.length));
}

export function fadeIn(samples: Float32Array, count: number): void {
  const n = Math.min(count, samples.length);
  for (let i = 0; i < n; i++) samples[i]! *= i / n;
}

export function fadeOut(samples: Float32Array, count: number): void {
  const n = Math.min(count, samples.length);
  for (let i = 0; i < n; i++) samples[samples.length - 1 - i]! *= i / n;
}

export function silence(seconds: number, sampleRate: number): Float32Array {
  return new Float32Array(Math.max(0, Math.round(seconds * sampleRate)));
}

/** Trims leading and trailing near-silence that the synthesizer adds around an utterance, keeping a little air. */
export function trimSilence(samples: Float32Array, sampleRate: number, keepSeconds = 0.04): Float32Array {
  const threshold = 0.004;
  let start = 0;
  while (start < samples.length && Math.abs(samples[start]!) < threshold) start++;
  let end = samples.length;
  while (end > start && Math.abs(samples[end - 1]!) < threshold) end--;
  const keep = Math.round(keepSeconds * sampleRate);
  return samples.subarray(Math.max(0, start - keep), Math.min(samples.length, end + keep));
}

export type AudioFormat = 'mp3' | 'ogg' | 'wav';

/** Tells MP3, OGG and WAV apart by their first bytes (servers often send a generic content type). */
export function sniffAudioFormat(bytes: Uint8Array): AudioFormat | undefined {
  const ascii = (start: number, end: number) => String.fromCharCode(...bytes.subarray(start, end));
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'wav';
  if (ascii(0, 4) === 'OggS') return 'ogg';
  if (ascii(0, 3) === 'ID3') return 'mp3';
  if (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0) return 'mp3';
  return undefined;
}

/** The parts one after another in one new array of `Kind`; a single part is returned as it is. */
export function concatenated<T extends Float32Array | Uint8Array>(
  parts: readonly T[],
  Kind: new (length: number) => T,
): T {
  if (parts.length === 1) return parts[0]!;
  const out = new Kind(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
