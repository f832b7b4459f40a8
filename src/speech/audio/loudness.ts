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

/**
 * Integrated loudness in LUFS of mono samples; -Infinity for silence. Shorter than one block: its mean square.
 * `scratch` (at least as long as the samples) holds the running sums, for a caller that reuses one buffer.
 *
 * One pass runs both K-weighting filters and keeps running sums of the squared output, so each 400 ms block's power is
 * one subtraction: the audio worker measures every utterance, and summing each block's samples again (they overlap
 * four times) cost it 0.2 to 0.3 CPU s per 15 minutes of speech.
 */
export function integratedLoudness(samples: Float32Array, sampleRate: number, scratch?: Float64Array): number {
  const [shelf, highPass] = kWeightingFilters(sampleRate);
  const { b0, b1, b2, a1, a2 } = shelf;
  const { b0: c0, b1: c1, b2: c2, a1: d1, a2: d2 } = highPass;
  const n = samples.length;
  // sums[i] = the squared weighted samples added up to and including sample i.
  const sums = scratch && scratch.length >= n ? scratch.subarray(0, n) : new Float64Array(n);
  let x1 = 0;
  let x2 = 0;
  let y1 = 0;
  let y2 = 0;
  let z1 = 0;
  let z2 = 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const x = samples[i]!;
    const y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
    x2 = x1;
    x1 = x;
    const z = c0 * y + c1 * y1 + c2 * y2 - d1 * z1 - d2 * z2;
    y2 = y1;
    y1 = y;
    z2 = z1;
    z1 = z;
    sum += z * z;
    sums[i] = sum;
  }
  const before = (i: number) => (i === 0 ? 0 : sums[i - 1]!);
  const block = Math.round(0.4 * sampleRate);
  const step = Math.round(0.1 * sampleRate);
  const powers: number[] = [];
  for (let start = 0; start + block <= n; start += step) powers.push((before(start + block) - before(start)) / block);
  if (powers.length === 0) powers.push(sum / Math.max(1, n));
  const loudness = (power: number) => -0.691 + 10 * Math.log10(power);
  const aboveAbsolute = powers.filter((p) => loudness(p) > -70);
  if (aboveAbsolute.length === 0) return Number.NEGATIVE_INFINITY;
  const relativeGate = loudness(aboveAbsolute.reduce((a, b) => a + b, 0) / aboveAbsolute.length) - 10;
  const gated = aboveAbsolute.filter((p) => loudness(p) > relativeGate);
  return loudness(gated.reduce((a, b) => a + b, 0) / gated.length);
}

/**
 * The most a peak limiter may take off a line's peaks: enough for kal16's diphone clicks (its lines came out 2.5 LU
 * under the target when the whole line was lowered to keep them under the ceiling), little enough not to be heard.
 */
const MAX_PEAK_REDUCTION = 10 ** (6 / 20);
/** The limiter's gain falls towards a peak over about this long before it and comes back over this long after. */
const LIMITER_ATTACK_S = 0.005;
const LIMITER_RELEASE_S = 0.1;

/**
 * Scales samples in place to the target loudness. Peaks the gain would take over the ceiling (-1.5 dBFS sample peak
 * keeps the true peak under -1 dBTP for 16 kHz speech, which has little energy near Nyquist) are brought down by a
 * smooth limiter, not by lowering the whole line; a line that would need more than 6 dB of that is lowered instead.
 * `scratch` (at least as long as the samples) spares the allocations of a line.
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
  for (let i = 0; i < samples.length; i++) {
    const magnitude = Math.abs(samples[i]!);
    if (magnitude > peak) peak = magnitude;
  }
  const gain = Math.min(10 ** ((targetLufs - lufs) / 20), (PEAK_CEILING * MAX_PEAK_REDUCTION) / Math.max(peak, 1e-9));
  for (let i = 0; i < samples.length; i++) samples[i]! *= gain;
  if (peak * gain > PEAK_CEILING) {
    limitPeaks(samples, sampleRate, scratch);
    // Limiting took a little loudness off (about 0.5 LU on kal16): make it up once, and limit what that lifts.
    const makeUp = 10 ** ((targetLufs - integratedLoudness(samples, sampleRate, scratch)) / 20);
    if (makeUp > 1.01 && makeUp < MAX_PEAK_REDUCTION) {
      for (let i = 0; i < samples.length; i++) samples[i]! *= makeUp;
      limitPeaks(samples, sampleRate, scratch);
    }
  }
  return samples;
}

/**
 * A look-ahead peak limiter over the whole line (it is all in memory): each sample's gain is at most what keeps it
 * under the ceiling, and gains only ever move smoothly, falling over LIMITER_ATTACK_S before a peak and rising over
 * LIMITER_RELEASE_S after it, so nothing is clipped and nothing clicks.
 */
function limitPeaks(samples: Float32Array, sampleRate: number, scratch?: Float64Array): void {
  const gains = scratch && scratch.length >= samples.length ? scratch : new Float64Array(samples.length);
  const n = samples.length;
  for (let i = 0; i < n; i++) {
    const magnitude = Math.abs(samples[i]!);
    gains[i] = magnitude > PEAK_CEILING ? PEAK_CEILING / magnitude : 1;
  }
  // Each pass only lowers gains, so no sample ends above the ceiling.
  const attack = 1 / Math.max(1, LIMITER_ATTACK_S * sampleRate);
  for (let i = n - 2; i >= 0; i--) gains[i] = Math.min(gains[i]!, gains[i + 1]! + (1 - gains[i + 1]!) * attack);
  const release = 1 - Math.exp(-1 / (LIMITER_RELEASE_S * sampleRate));
  for (let i = 1; i < n; i++) gains[i] = Math.min(gains[i]!, gains[i - 1]! + (1 - gains[i - 1]!) * release);
  for (let i = 0; i < n; i++) samples[i]! *= gains[i]!;
}
