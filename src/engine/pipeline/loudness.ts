// Loudness as ITU-R BS.1770-4 measures it (K-weighting, 400 ms blocks with 75 % overlap, absolute gate at -70 LUFS
// and relative gate at -10 LU), for mono audio at any sample rate. The engine levels every utterance and every
// intro/outro to the podcast target with it, instead of to an RMS figure that measured 2.5 LU quiet.

/** Podcast target for mono: -19 LUFS integrated (equivalent to -16 LUFS for stereo), true peak at most -1 dBTP. */
export const TARGET_LUFS = -19;
export const PEAK_CEILING = 10 ** (-1.5 / 20);

interface Biquad {
  b0: number;
  b1: number;
  b2: number;
  a1: number;
  a2: number;
}

/** The two K-weighting filters of BS.1770 (a high shelf, then a high pass), derived for the sample rate. */
export function kWeightingFilters(sampleRate: number): [Biquad, Biquad] {
  // Constants from the standard's 48 kHz coefficients, as libebur128 and pyloudnorm derive them for any rate.
  let f0 = 1681.974450955533;
  const gain = 3.999843853973347;
  let q = 0.7071752369554196;
  let k = Math.tan((Math.PI * f0) / sampleRate);
  const vh = 10 ** (gain / 20);
  const vb = vh ** 0.4996667741545416;
  let a0 = 1 + k / q + k * k;
  const shelf: Biquad = {
    b0: (vh + (vb * k) / q + k * k) / a0,
    b1: (2 * (k * k - vh)) / a0,
    b2: (vh - (vb * k) / q + k * k) / a0,
    a1: (2 * (k * k - 1)) / a0,
    a2: (1 - k / q + k * k) / a0,
  };
  f0 = 38.13547087602444;
  q = 0.5003270373238773;
  k = Math.tan((Math.PI * f0) / sampleRate);
  a0 = 1 + k / q + k * k;
  const highPass: Biquad = { b0: 1, b1: -2, b2: 1, a1: (2 * (k * k - 1)) / a0, a2: (1 - k / q + k * k) / a0 };
  return [shelf, highPass];
}

/** `out` may be `input` (each output sample is written after its input sample is read). */
function filter(input: Float32Array | Float64Array, f: Biquad, out: Float64Array): Float64Array {
  let x1 = 0;
  let x2 = 0;
  let y1 = 0;
  let y2 = 0;
  for (let i = 0; i < input.length; i++) {
    const x = input[i]!;
    const y = f.b0 * x + f.b1 * x1 + f.b2 * x2 - f.a1 * y1 - f.a2 * y2;
    out[i] = y;
    x2 = x1;
    x1 = x;
    y2 = y1;
    y1 = y;
  }
  return out;
}

/**
 * Integrated loudness in LUFS of mono samples; -Infinity for silence. Shorter than one block: its mean square.
 * `scratch` (at least as long as the samples) holds the filtered signal, for a caller that reuses one buffer.
 */
export function integratedLoudness(samples: Float32Array, sampleRate: number, scratch?: Float64Array): number {
  const [shelf, highPass] = kWeightingFilters(sampleRate);
  const out =
    scratch && scratch.length >= samples.length
      ? scratch.subarray(0, samples.length)
      : new Float64Array(samples.length);
  const weighted = filter(filter(samples, shelf, out), highPass, out);
  const block = Math.round(0.4 * sampleRate);
  const step = Math.round(0.1 * sampleRate);
  const powers: number[] = [];
  for (let start = 0; start + block <= weighted.length; start += step) {
    let sum = 0;
    for (let i = start; i < start + block; i++) sum += weighted[i]! * weighted[i]!;
    powers.push(sum / block);
  }
  if (powers.length === 0) {
    let sum = 0;
    for (const w of weighted) sum += w * w;
    powers.push(sum / Math.max(1, weighted.length));
  }
  const loudness = (power: number) => -0.691 + 10 * Math.log10(power);
  const aboveAbsolute = powers.filter((p) => loudness(p) > -70);
  if (aboveAbsolute.length === 0) return Number.NEGATIVE_INFINITY;
  const relativeGate = loudness(aboveAbsolute.reduce((a, b) => a + b, 0) / aboveAbsolute.length) - 10;
  const gated = aboveAbsolute.filter((p) => loudness(p) > relativeGate);
  return loudness(gated.reduce((a, b) => a + b, 0) / gated.length);
}

/**
 * Scales samples in place to the target loudness, then lowers them if a peak would pass the ceiling (-1.5 dBFS
 * sample peak keeps the true peak under -1 dBTP for 16 kHz speech, which has little energy near Nyquist).
 */
export function levelToLoudness(
  samples: Float32Array,
  sampleRate: number,
  targetLufs = TARGET_LUFS,
  scratch?: Float64Array,
): Float32Array {
  const lufs = integratedLoudness(samples, sampleRate, scratch);
  if (!Number.isFinite(lufs)) return samples;
  let peak = 0;
  for (const s of samples) peak = Math.max(peak, Math.abs(s));
  const gain = Math.min(10 ** ((targetLufs - lufs) / 20), PEAK_CEILING / Math.max(peak, 1e-9));
  for (let i = 0; i < samples.length; i++) samples[i]! *= gain;
  return samples;
}
