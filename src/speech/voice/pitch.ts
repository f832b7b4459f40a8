// Intonation the voices do not give by themselves: a yes/no question ends on a rise, the items of a list before the
// last rise a little (the last falls, as Flite ends any statement), a heading stands a little higher.
//
// Flite cannot be asked for it: rms and kal16 ignore int_f0_target_mean, f0_shift and SSML <prosody pitch> in the
// build we ship (the samples come out identical; only slt responds), and the build is a prebuilt WebAssembly from
// npm, so there is no hook into its F0 track before the vocoder. The pitch is therefore bent after synthesis with
// time-domain pitch-synchronous overlap-add (TD-PSOLA): pitch marks one period apart, two-period windows moved
// closer together (higher) or further apart (lower). Durations stay as they were, so cues and segment times stay
// right, and only the voiced stretches inside a bend are touched, each joined to the original over one period.
//
import { FLITE_VOWELS as VOWELS, type Segment } from './phones';
import { type Intonation, LIST_FALL, LIST_RISE, QUESTION_RISE } from '../text/intonation';

export interface Bend {
  start: number;
  end: number;
  /**
   * "rise": from the pitch the voice has at start, a glide by `semitones` (up, or down when negative) reached at the
   * end of the last voiced sound;
   * "lift": every period raised by `semitones`.
   */
  kind: 'rise' | 'lift';
  semitones: number;
}

/** The least voiced time (seconds of vowels and sonorants) a list item's continuation rise is spread over. */
const MIN_ITEM_GLIDE = 0.15;
/** Phones the voice carries a pitch through: vowels, liquids, glides and nasals. */
const SONORANTS: ReadonlySet<string> = new Set([...VOWELS, 'l', 'r', 'w', 'y', 'm', 'n', 'ng']);
/** Reduced vowels: a rise starts on the word's first full vowel ("to-MOR-row"), not on a schwa before it. */
const REDUCED = new Set(['ax', 'axr']);

/** Whether applying the intonation needs Flite's segments (a lift does not: it raises the whole line). */
export function needsSegments(intonation: Intonation): boolean {
  return Boolean(
    intonation.rise || intonation.continues || intonation.fall || intonation.listPauses?.length || intonation.lastItem,
  );
}

/** Flite's -psdur output, one utterance a line, each timed from its own start. */
export function utterancesOf(psdur: string): Segment[][] {
  return psdur
    .split('\n')
    .map((line) => [...line.matchAll(/([a-z]+):(\d+(?:\.\d+)?)/g)].map((m) => ({ phone: m[1]!, end: Number(m[2]) })))
    .filter((segments) => segments.length > 0);
}

/**
 * The last utterance's segments, timed from the start of the line's audio, or undefined when that start is not
 * known. rms and slt write each utterance as long as its segments say, so the last one starts where the others'
 * lengths add up to; kal16 trims each utterance's final pause by an amount the segments do not tell, so only a line
 * of one utterance can be placed.
 */
export function placeLastUtterance(utterances: Segment[][], seconds: number): Segment[] | undefined {
  const last = utterances.at(-1);
  if (!last) return undefined;
  if (utterances.length === 1) return last;
  const total = utterances.reduce((sum, u) => sum + (u.at(-1)?.end ?? 0), 0);
  if (Math.abs(total - seconds) > 0.02) return undefined;
  const offset = seconds - last.at(-1)!.end;
  return last.map((s) => ({ phone: s.phone, end: s.end + offset }));
}

/**
 * Where to bend the pitch of a line, from its intonation and the segments of its last utterance (timed from the
 * line's start). `lastWordPhones` is the number of phones the last word has when said alone, `lastItemPhones` the
 * phones of the list's last item with its "and" (Intonation.lastItem) said alone.
 */
export function bendsFor(
  intonation: Intonation,
  segments: Segment[] | undefined,
  lastWordPhones: number | undefined,
  seconds: number,
  lastItemPhones?: string[],
): Bend[] {
  const bends: Bend[] = [];
  if (intonation.lift) bends.push({ start: 0, end: seconds, kind: 'lift', semitones: intonation.lift });
  if (!segments) return bends;
  const timed = segments.map((s, i) => ({ phone: s.phone, start: i > 0 ? segments[i - 1]!.end : 0, end: s.end }));
  // An item's rise: from its last full vowel ("AP-ples", not the schwa after it) to where the item ends.
  const itemRise = (endsAt: number) => {
    let vowel = -1;
    for (let i = endsAt - 1; i >= 0 && timed[i]!.phone !== 'pau'; i--) {
      if (VOWELS.has(timed[i]!.phone) && (vowel < 0 || !REDUCED.has(timed[i]!.phone))) vowel = i;
      if (vowel >= 0 && !REDUCED.has(timed[vowel]!.phone)) break;
    }
    if (vowel >= 0)
      bends.push({ start: timed[vowel]!.start, end: timed[endsAt]!.start, kind: 'rise', semitones: LIST_RISE });
  };
  // Pauses inside the utterance (not its first and last), from the end.
  const inner = timed.map((s, i) => ({ ...s, i })).filter((s, i) => s.phone === 'pau' && i > 0 && i < timed.length - 1);
  for (const back of intonation.listPauses ?? []) {
    const pause = inner[inner.length - back];
    if (pause) itemRise(pause.i);
  }
  if (intonation.lastItem && lastItemPhones && lastItemPhones.length > 0) {
    // Without a pause before "and plums", the item before ends where those phones start, counted back from the
    // end; only when the line says them exactly as they are said alone (else the count could land mid-word).
    let close = timed.length;
    while (close > 0 && timed[close - 1]!.phone === 'pau') close--;
    const from = close - lastItemPhones.length;
    const said = from > 0 ? timed.slice(from, close).map((s) => s.phone) : [];
    if (said.join(' ') === lastItemPhones.join(' ') && timed[from - 1]!.phone !== 'pau') itemRise(from);
  }
  // A bend at the end of the line runs into the final pause: the voice goes on a little past the last phone's end
  // (slt by 20-40 ms), and that tail left at its old pitch would undo the end of a rise.
  const end = timed.at(-1)!.end;
  if (intonation.fall) {
    // The last syllable: from the utterance's last vowel to the end.
    const vowel = timed.findLast((s) => VOWELS.has(s.phone));
    if (vowel) bends.push({ start: vowel.start, end, kind: 'rise', semitones: LIST_FALL });
  }
  if ((intonation.rise || intonation.continues) && lastWordPhones && lastWordPhones > 0) {
    const spoken = timed.filter((s) => s.phone !== 'pau');
    const word = spoken.slice(-lastWordPhones);
    if (word.length === lastWordPhones) {
      let full =
        word.find((s) => VOWELS.has(s.phone) && !REDUCED.has(s.phone)) ?? word.find((s) => VOWELS.has(s.phone));
      if (full && intonation.continues) {
        // A list item's rise is gentler than a question's: spread over at least MIN_ITEM_GLIDE of voice, from an
        // earlier full vowel when the last word has too little ("on DISK" rises from "on"). Over a short vowel the
        // glide would be too steep for PSOLA to keep the periods steady.
        const voiced = (from: number) =>
          timed.slice(from).reduce((sum, s) => sum + (SONORANTS.has(s.phone) ? s.end - s.start : 0), 0);
        let at = timed.indexOf(full);
        while (at > 0 && voiced(at) < MIN_ITEM_GLIDE) {
          let i = at - 1;
          while (i >= 0 && timed[i]!.phone !== 'pau' && (!VOWELS.has(timed[i]!.phone) || REDUCED.has(timed[i]!.phone)))
            i--;
          if (i < 0 || timed[i]!.phone === 'pau') break;
          at = i;
        }
        full = timed[at];
      }
      const semitones = intonation.rise ? QUESTION_RISE : LIST_RISE;
      if (full) bends.push({ start: full.start, end, kind: 'rise', semitones });
    }
  }
  return bends;
}

// ---- The signal side: a pitch track, pitch marks, and PSOLA ----

const MIN_F0 = 60;
const MAX_F0 = 400;
const HOP_S = 0.01;
const WINDOW_S = 0.03;
/** A frame is voiced when it repeats itself one period later this well (normalized correlation). */
const VOICED = 0.6;
/** The most a bend moves the pitch in one go: PSOLA past about an octave sounds hollow or buzzy. */
const MIN_RATIO = 0.7;
const MAX_RATIO = 1.7;
/** The most of the voice's own pitch movement a rise undoes: 5 semitones either way. */
const FLATTEN = 2 ** (5 / 12);

interface Track {
  /** The sample of frame 0's centre. */
  first: number;
  hop: number;
  /** Pitch in Hz per frame, 0 where unvoiced. */
  f0: Float64Array;
}

/**
 * A pitch track over [from, to) by normalized autocorrelation, the lag preferring the period over its multiples.
 * It runs on the signal at half rate (pairs averaged): a quarter of the work, and still a period to within a
 * quarter of a semitone, which is all the bends need from it.
 */
function trackPitch(x: Float32Array, rate: number, from: number, to: number): Track {
  const half = new Float32Array(x.length >> 1);
  for (let i = 0; i < half.length; i++) half[i] = (x[2 * i]! + x[2 * i + 1]!) / 2;
  const low = rate / 2;
  const hop = Math.max(2, 2 * Math.round((rate * HOP_S) / 2));
  const window = Math.round(low * WINDOW_S);
  const minLag = Math.floor(low / MAX_F0);
  const maxLag = Math.ceil(low / MIN_F0);
  let peak = 0;
  for (let i = from; i < to; i++) peak = Math.max(peak, Math.abs(x[i]!));
  const quiet = (peak * 0.05) ** 2;
  const count = Math.max(0, Math.floor((to - from) / hop));
  const f0 = new Float64Array(count);
  const scores = new Float64Array(maxLag + 2);
  for (let k = 0; k < count; k++) {
    const centre = (from + k * hop) >> 1;
    const start = centre - (window >> 1);
    if (start < 0 || start + window + maxLag + 1 > half.length) continue;
    let energy = 0;
    for (let i = start; i < start + window; i++) energy += half[i]! * half[i]!;
    if (energy / window < quiet) continue;
    let best = 0;
    // Running energy of the shifted window, updated one sample per lag.
    let shifted = 0;
    for (let i = start + minLag; i < start + minLag + window; i++) shifted += half[i]! * half[i]!;
    for (let lag = minLag; lag <= maxLag + 1; lag++) {
      let sum = 0;
      for (let i = start; i < start + window; i++) sum += half[i]! * half[i + lag]!;
      const score = sum / Math.sqrt(energy * shifted + 1e-9);
      scores[lag] = score;
      if (lag <= maxLag && score > best) best = score;
      const out = half[start + lag]!;
      const inn = half[start + lag + window] ?? 0;
      shifted += inn * inn - out * out;
    }
    if (best < VOICED) continue;
    // The shortest lag nearly as good as the best: the period, not two of them.
    const peakAt = (l: number) =>
      scores[l]! >= 0.9 * best && (l === minLag || scores[l]! >= scores[l - 1]!) && scores[l]! >= scores[l + 1]!;
    let lag = minLag;
    while (lag < maxLag && !peakAt(lag)) lag++;
    // Parabolic interpolation between lags: the half rate would otherwise round periods to two samples.
    const a = scores[lag - 1] ?? scores[lag]!;
    const b = scores[lag]!;
    const c = scores[lag + 1]!;
    const curve = a + c - 2 * b;
    const shift = lag > minLag && curve < 0 ? Math.max(-0.5, Math.min(0.5, (a - c) / (2 * curve))) : 0;
    f0[k] = low / (lag + shift);
  }
  // A median of three removes single-frame octave jumps.
  const smooth = new Float64Array(count);
  for (let k = 0; k < count; k++) {
    const around = [f0[k - 1] ?? 0, f0[k]!, f0[k + 1] ?? 0].filter((v) => v > 0).sort((a, b) => a - b);
    smooth[k] = f0[k]! > 0 ? around[around.length >> 1]! : 0;
  }
  return { first: from, hop, f0: smooth };
}

function f0At(track: Track, sample: number): number {
  const k = Math.round((sample - track.first) / track.hop);
  return track.f0[Math.max(0, Math.min(track.f0.length - 1, k))] ?? 0;
}

/** Voiced runs of a track, in samples: [start, end). */
function voicedRuns(track: Track): [number, number][] {
  const runs: [number, number][] = [];
  let open = -1;
  for (let k = 0; k <= track.f0.length; k++) {
    const voiced = k < track.f0.length && track.f0[k]! > 0;
    if (voiced && open < 0) open = k;
    if (!voiced && open >= 0) {
      // Runs shorter than three periods-worth of frames are too short to bend audibly; they stay as they are.
      if (k - open >= 3) runs.push([track.first + open * track.hop, track.first + (k - 1) * track.hop]);
      open = -1;
    }
  }
  return runs;
}

/** Pitch marks in a voiced run: one per period, each on the period's largest sample. */
function pitchMarks(x: Float32Array, rate: number, track: Track, start: number, end: number): number[] {
  const marks: number[] = [];
  const period = (at: number) => Math.max(1, Math.round(rate / Math.max(f0At(track, at), MIN_F0)));
  let at = start;
  for (let i = start; i < Math.min(end, start + period(start)); i++) if (x[i]! > x[at]!) at = i;
  while (at < end) {
    marks.push(at);
    const p = period(at);
    const lo = at + Math.round(p * 0.8);
    const hi = Math.min(x.length - 1, at + Math.round(p * 1.2));
    if (lo > hi) break;
    let next = lo;
    for (let i = lo; i <= hi; i++) if (x[i]! > x[next]!) next = i;
    at = next;
  }
  return marks;
}

/** The pitch ratio a bend asks for at a sample (1 outside it). */
type RatioAt = (sample: number) => number;

function ratioFor(bend: Bend, track: Track, rate: number, voicedEnd: number): RatioAt {
  const start = Math.round(bend.start * rate);
  const end = Math.round(bend.end * rate);
  if (bend.kind === 'lift') {
    const ratio = 2 ** (bend.semitones / 12);
    return (s) => (s >= start && s < end ? ratio : 1);
  }
  // A rise: from the voice's own pitch where the bend starts, up to `semitones` above it at the end of the voicing.
  let from = 0;
  for (let s = start; s < end && from === 0; s += track.hop) from = f0At(track, s);
  if (from === 0) return () => 1;
  const stop = Math.max(start + 1, Math.min(end, voicedEnd));
  return (s) => {
    if (s < start || s >= end) return 1;
    const own = f0At(track, s);
    if (own === 0) return 1;
    const progress = Math.min(1, (s - start) / (stop - start));
    // Convex: the glide gathers pace towards the end, as a spoken rise does. The voice's own movement inside the
    // bend is undone (a question's rise replaces Flite's fall), but by no more than FLATTEN: a pitch estimate an
    // octave off would otherwise double the voice.
    const clamped = Math.max(from / FLATTEN, Math.min(from * FLATTEN, own));
    const ratio = (from / clamped) * 2 ** ((bend.semitones * progress ** 1.5) / 12);
    // A fall only ever lowers: where the voice already falls further, it is left as it is.
    const wanted = bend.semitones < 0 ? Math.min(1, ratio) : ratio;
    return Math.max(MIN_RATIO, Math.min(MAX_RATIO, wanted));
  };
}

/**
 * Returns the samples with the bends applied (a new array of the same length), or the same array when nothing is
 * voiced inside any bend.
 */
export function bendPitch(samples: Int16Array, rate: number, bends: Bend[]): Int16Array {
  if (bends.length === 0) return samples;
  const x = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) x[i] = samples[i]!;
  const from = Math.max(0, Math.floor(Math.min(...bends.map((b) => b.start)) * rate));
  const to = Math.min(samples.length, Math.ceil(Math.max(...bends.map((b) => b.end)) * rate));
  if (to - from < rate * 0.02) return samples;
  const track = trackPitch(x, rate, from, to);
  const runs = voicedRuns(track);
  const lastVoiced = (start: number, end: number) =>
    runs.filter(([a]) => a < end).reduce((e, [, b]) => (b > start ? Math.max(e, Math.min(b, end)) : e), start);
  const ratios = bends.map((bend) =>
    ratioFor(bend, track, rate, lastVoiced(Math.round(bend.start * rate), Math.round(bend.end * rate))),
  );
  const ratioAt: RatioAt = (s) => ratios.reduce((r, at) => r * at(s), 1);
  const y = new Float32Array(x);
  let changed = false;
  for (const [start, end] of runs) {
    let moves = false;
    for (let s = start; s < end && !moves; s += track.hop) moves = Math.abs(ratioAt(s) - 1) > 0.005;
    if (!moves) continue;
    const marks = pitchMarks(x, rate, track, start, end);
    if (marks.length < 3) continue;
    changed = overlapAdd(x, y, marks, ratioAt) || changed;
  }
  if (!changed) return samples;
  const out = new Int16Array(samples.length);
  for (let i = 0; i < y.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(y[i]!)));
  return out;
}

/**
 * TD-PSOLA over one voiced run, written into y between its first and last synthesis marks, joined to the original
 * over one period at each end (a crossfade, so the edges do not click).
 */
function overlapAdd(x: Float32Array, y: Float32Array, marks: number[], ratioAt: RatioAt): boolean {
  const first = marks[0]!;
  const last = marks[marks.length - 1]!;
  const span = last - first;
  const acc = new Float32Array(span + 1);
  const periodAt = (i: number) => (i + 1 < marks.length ? marks[i + 1]! - marks[i]! : marks[i]! - marks[i - 1]!);
  let nearest = 0;
  let t = first;
  const placed: number[] = [];
  while (t <= last) {
    while (nearest + 1 < marks.length && Math.abs(marks[nearest + 1]! - t) <= Math.abs(marks[nearest]! - t)) nearest++;
    const analysis = periodAt(nearest);
    const ratio = ratioAt(t);
    const step = Math.max(2, analysis / ratio);
    // Raising: windows as long as the new period (they overlap twice, no more); lowering: as long as the old one.
    const half = Math.max(1, Math.round(Math.min(analysis, step)));
    const centre = Math.round(t);
    const source = marks[nearest]!;
    for (let k = -half + 1; k < half; k++) {
      const at = centre + k - first;
      const from = source + k;
      if (at < 0 || at > span || from < 0 || from >= x.length) continue;
      acc[at]! += x[from]! * 0.5 * (1 + Math.cos((Math.PI * k) / half));
    }
    placed.push(centre);
    t += step;
  }
  if (placed.length < 3) return false;
  const begin = placed[0]!;
  const finish = placed[placed.length - 1]!;
  const fadeIn = placed[1]! - begin;
  const fadeOut = finish - placed[placed.length - 2]!;
  for (let s = begin; s <= finish; s++) {
    const w = Math.min(1, (s - begin) / fadeIn, (finish - s) / fadeOut);
    y[s] = x[s]! * (1 - w) + acc[s - first]! * w;
  }
  return true;
}
