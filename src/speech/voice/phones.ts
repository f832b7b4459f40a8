// Flite's phones as its segments name them: a leaf shared by the synthesis messages, intonation and the checks.

/** One phone as Flite placed it: its name ("pau" for silence) and its end in seconds. */
export interface Segment {
  phone: string;
  end: number;
}

/** The vowels of Flite's US English phone set, the phones a word's stress and length are read from. */
export const FLITE_VOWELS: ReadonlySet<string> = new Set([
  'aa',
  'ae',
  'ah',
  'ao',
  'aw',
  'ax',
  'axr',
  'ay',
  'eh',
  'er',
  'ey',
  'ih',
  'iy',
  'ow',
  'oy',
  'uh',
  'uw',
]);
