// A pitch tracker for tests and benches, independent of the engine's (src/speech/voice/pitch.ts tracks by
// normalized autocorrelation; this one is YIN: the cumulative mean normalized difference, de Cheveigné and
// Kawahara 2002), so a bend is measured by a method other than the one that made it. Deterministic: fixed frames,
// no randomness, no clocks.

export interface PitchFrame {
  /** Centre of the frame, seconds from the start of the samples. */
  time: number;
  /** Hz. */
  f0: number;
}

const MIN_F0 = 60;
const MAX_F0 = 400;
const HOP_S = 0.01;
const WINDOW_S = 0.03;
/** YIN's absolute threshold: the first dip of the difference function below it is the period. */
const THRESHOLD = 0.15;

/** The voiced frames of samples (16-bit or float: the measure is scale-free) between two times in seconds. */
export function pitchContour(
  samples: Int16Array | Float32Array,
  rate: number,
  from = 0,
  to = samples.length / rate,
): PitchFrame[] {
  const window = Math.round(rate * WINDOW_S);
  const hop = Math.round(rate * HOP_S);
  const maxLag = Math.ceil(rate / MIN_F0);
  const minLag = Math.floor(rate / MAX_F0);
  let peak = 0;
  for (const s of samples) peak = Math.max(peak, Math.abs(s));
  const quiet = (peak * 0.05) ** 2;
  const diff = new Float64Array(maxLag + 2);
  const frames: PitchFrame[] = [];
  for (
    let start = Math.max(0, Math.round(from * rate));
    start + window + maxLag + 1 < Math.min(samples.length, to * rate + window);
    start += hop
  ) {
    const centre = (start + window / 2) / rate;
    if (centre > to) break;
    let energy = 0;
    for (let i = start; i < start + window; i++) energy += samples[i]! * samples[i]!;
    if (energy / window < quiet) continue;
    diff[0] = 1;
    let running = 0;
    let lag = -1;
    for (let tau = 1; tau <= maxLag + 1; tau++) {
      let d = 0;
      for (let i = start; i < start + window; i++) {
        const delta = samples[i]! - samples[i + tau]!;
        d += delta * delta;
      }
      running += d;
      diff[tau] = (d * tau) / (running || 1);
    }
    for (let tau = minLag; tau <= maxLag; tau++) {
      if (diff[tau]! < THRESHOLD) {
        while (tau + 1 <= maxLag && diff[tau + 1]! < diff[tau]!) tau++;
        lag = tau;
        break;
      }
    }
    if (lag < 0) continue;
    // Parabolic interpolation around the dip for a pitch finer than one sample of lag.
    const a = diff[lag - 1]!;
    const b = diff[lag]!;
    const c = diff[lag + 1]!;
    const shift = a + c - 2 * b !== 0 ? (a - c) / (2 * (a + c - 2 * b)) : 0;
    frames.push({ time: centre, f0: rate / (lag + Math.max(-0.5, Math.min(0.5, shift))) });
  }
  return frames;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[sorted.length >> 1]!;
}

export function semitones(from: number, to: number): number {
  return 12 * Math.log2(to / from);
}

/**
 * How far the pitch ends above (positive) or below (negative) the rest of a stretch, in semitones: the median of its
 * last three voiced frames (30 ms) against the median of all its voiced frames. A yes/no question should end well
 * above; a statement ends below or level. NaN when fewer than six frames are voiced.
 */
export function endPitch(frames: PitchFrame[]): number {
  if (frames.length < 6) return Number.NaN;
  return semitones(median(frames.map((f) => f.f0)), median(frames.slice(-3).map((f) => f.f0)));
}
