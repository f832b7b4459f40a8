// Word error as the listening bench counts it (bench/listening.ts). The strict figure compares the words the engine
// meant to say with what pocketsphinx wrote, word for word. Three things in it are about the recogniser, not the
// voice, so the bench prints a second figure with them set apart, and says how many words that concerned:
// - spelling variants: the recogniser's language model writes "harbor" for a clear "harbour" (both are in its
//   dictionary; the sound is the same), so variants of one word count as that word in both texts, as do words
//   that differ only by an apostrophe ("millers" for "miller's");
// - compounds: it writes "time out" for "timeout" (the same sound), so two neighbouring words are joined where the
//   other text has them as one;
// - words the recogniser cannot write: a meant word missing from its pronouncing dictionary (kubernetes, config,
//   retries) can never come out right, whatever the voice does; such words are left out of the count (with whatever
//   the recogniser put in their place), and listed.
import { readFileSync } from 'node:fs';
import { americanSpelling } from '../src/speech/text/normalize/spelling';

/** Lower-case words without punctuation, as the recogniser writes them. */
export function wordsOf(text: string): string[] {
  return casedWordsOf(text).map(({ word }) => word.toLowerCase());
}

/** The words of wordsOf with their case, and whether only spaces stand between each and the one before. */
function casedWordsOf(text: string): { word: string; joined: boolean }[] {
  const words: { word: string; joined: boolean }[] = [];
  let gap = '';
  for (const piece of text.replace(/[’']/g, "'").split(/([^A-Za-z0-9'-]+)/)) {
    if (!/[A-Za-z0-9']/.test(piece)) {
      gap += piece;
      continue;
    }
    for (const [k, part] of piece.split('-').entries()) {
      const word = part.replace(/^'+|'+$/g, '');
      if (!word) continue;
      words.push({ word, joined: words.length > 0 && k === 0 && /^ +$/.test(gap) });
      gap = k === 0 ? gap : '-';
    }
    gap = '';
  }
  return words;
}

/**
 * Which of wordsOf(text) are spelled letters, as the normalizer writes them: a single capital letter in a run of
 * them ("N P M", "C I": only spaces between), or alone when it is not the word "A" or "I".
 */
export function spelledLetters(text: string): boolean[] {
  const words = casedWordsOf(text);
  const capital = (i: number) => words[i] !== undefined && /^[A-Z]$/.test(words[i].word);
  return words.map(
    ({ word, joined }, i) =>
      capital(i) &&
      ((joined && capital(i - 1)) ||
        (words[i + 1]?.joined === true && capital(i + 1)) ||
        (word !== 'A' && word !== 'I')),
  );
}

/**
 * One spelling for a word spelled two ways ("harbour" -> "harbor": the normalizer's own table, what Pro says), and
 * without apostrophes (it writes "millers" for "miller's", the same sound).
 */
export function commonSpelling(word: string): string {
  return americanSpelling(word).replace(/'/g, '');
}

interface Step {
  kind: 'same' | 'substituted' | 'missed' | 'inserted';
  meant?: string;
  heard?: string;
}

/** The fewest edits from meant to heard (word-level Levenshtein), as steps. */
function alignment(meant: string[], heard: string[]): Step[] {
  const d = Array.from({ length: meant.length + 1 }, (_, i) =>
    Array.from({ length: heard.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= meant.length; i++)
    for (let j = 1; j <= heard.length; j++)
      d[i]![j] = Math.min(
        d[i - 1]![j]! + 1,
        d[i]![j - 1]! + 1,
        d[i - 1]![j - 1]! + (meant[i - 1] === heard[j - 1] ? 0 : 1),
      );
  const steps: Step[] = [];
  let i = meant.length;
  let j = heard.length;
  while (i > 0 || j > 0) {
    const same = i > 0 && j > 0 && meant[i - 1] === heard[j - 1];
    if (i > 0 && j > 0 && d[i]![j] === d[i - 1]![j - 1]! + (same ? 0 : 1)) {
      steps.push({ kind: same ? 'same' : 'substituted', meant: meant[--i], heard: heard[--j] });
    } else if (i > 0 && d[i]![j] === d[i - 1]![j]! + 1) {
      steps.push({ kind: 'missed', meant: meant[--i] });
    } else {
      steps.push({ kind: 'inserted', heard: heard[--j] });
    }
  }
  return steps.reverse();
}

/** The reference and what was heard, aligned word by word: "[meant->heard]", "[-missed]", "[+inserted]". */
export function alignWords(meant: string[], heard: string[]): string {
  return alignment(meant, heard)
    .map((s) =>
      s.kind === 'same'
        ? s.meant
        : s.kind === 'substituted'
          ? `[${s.meant}->${s.heard}]`
          : s.kind === 'missed'
            ? `[-${s.meant}]`
            : `[+${s.heard}]`,
    )
    .join(' ');
}

/** Word error rate: word-level Levenshtein distance over the reference length. */
export function wordError(meant: string[], heard: string[]): number {
  return meant.length === 0 ? 0 : wordErrors(meant, heard) / meant.length;
}

export interface FairScore {
  /** Errors over the meant words the recogniser can write, spelling variants as one word. */
  rate: number;
  /** Meant words it cannot write (not in its dictionary), each once. */
  unwritable: string[];
  /** How many meant word occurrences were set aside as unwritable. */
  setAside: number;
  /** How many errors of the strict count were spelling variants only. */
  variants: number;
  /** How many compounds were written apart on one side and together on the other ("time out" for "timeout"). */
  compounds: number;
}

/** Two neighbouring words joined where the other side has them as one word ("time out" -> "timeout"). */
function joinCompounds(words: string[], otherSide: Set<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const joined = `${words[i]}${words[i + 1] ?? ''}`;
    if (i + 1 < words.length && otherSide.has(joined)) {
      out.push(joined);
      i++;
    } else out.push(words[i]!);
  }
  return out;
}

/**
 * The second figure: spelling variants and compounds written apart ("time out" for "timeout") count as the same word; a meant word the recogniser cannot write is left out
 * with what it heard in its place (a substitution or a miss), and out of the word count. Inserted words still count.
 */
export function fairWordError(meant: string[], heard: string[], canWrite: (word: string) => boolean): FairScore {
  const strict = alignment(meant, heard);
  const variants = strict.filter(
    (s) => s.kind === 'substituted' && commonSpelling(s.meant!) === commonSpelling(s.heard!),
  ).length;
  const meantWords = new Set(meant.map(commonSpelling));
  const heardWords = new Set(heard.map(commonSpelling));
  const meantJoined = joinCompounds(meant.map(commonSpelling), heardWords);
  const heardJoined = joinCompounds(heard.map(commonSpelling), meantWords);
  const compounds = meant.length - meantJoined.length + heard.length - heardJoined.length;
  const steps = alignment(meantJoined, heardJoined);
  const unwritable = new Set<string>();
  let setAside = 0;
  let errors = 0;
  for (const step of steps) {
    // Only letter words: a digit or a glued identifier left in the meant text is the normalizer's fault, counted.
    if (step.meant !== undefined && /^[a-z']+$/.test(step.meant) && !canWrite(step.meant)) {
      unwritable.add(step.meant);
      setAside++;
      continue;
    }
    if (step.kind !== 'same') errors++;
  }
  const counted = meantJoined.length - setAside;
  return { rate: counted === 0 ? 0 : errors / counted, unwritable: [...unwritable], setAside, variants, compounds };
}

/** Pronunciations per word in pocketsphinx's dictionary ("word" and "word(2)" lines), or undefined without it. */
export function recogniserPronunciations(
  dictionary = '/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict',
): Map<string, Set<string>> | undefined {
  let text: string;
  try {
    text = readFileSync(dictionary, 'utf8');
  } catch {
    return undefined;
  }
  const phones = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const match = /^(\S+?)(?:\(\d+\))?\s+(.+)$/.exec(line);
    if (!match) continue;
    const word = match[1]!;
    if (!phones.has(word)) phones.set(word, new Set());
    phones.get(word)!.add(match[2]!.trim());
  }
  return phones;
}

export interface ErrorKinds {
  errors: number;
  /** Errors on a spelled letter ("n p m"), or next to one (the recogniser merges a run of letters with its neighbours). */
  atLetters: number;
  /** Substitutions by a word the recogniser's own dictionary says the same way (cache/cash, patience/patients). */
  homophones: number;
  other: number;
  meant: number;
}

/**
 * Where the strict errors are, so a reader can see what a target would need: how many sit at spelled letters, how
 * many are homophones no voice can tell apart for this recogniser, and how many are left.
 */
export function errorKinds(
  meantText: string,
  heard: string[],
  pronunciations: ReadonlyMap<string, ReadonlySet<string>>,
): ErrorKinds {
  const meant = wordsOf(meantText);
  const spelled = spelledLetters(meantText);
  const steps = alignment(meant, heard);
  // The meant word each step is at (an insertion sits before the next meant word).
  let next = 0;
  const at = steps.map((step) => (step.kind === 'inserted' ? next : next++));
  const letter = (i: number) => steps[i] !== undefined && steps[i].kind !== 'inserted' && spelled[at[i]!] === true;
  const sameSound = (a: string, b: string) =>
    [...(pronunciations.get(a) ?? [])].some((p) => pronunciations.get(b)?.has(p));
  const kinds: ErrorKinds = { errors: 0, atLetters: 0, homophones: 0, other: 0, meant: meant.length };
  steps.forEach((step, i) => {
    if (step.kind === 'same') return;
    kinds.errors++;
    if (step.kind === 'substituted' && sameSound(step.meant!, step.heard!)) kinds.homophones++;
    else if (letter(i) || letter(i - 1) || letter(i + 1)) kinds.atLetters++;
    else kinds.other++;
  });
  return kinds;
}

/** Word errors (substitutions, misses, insertions) of what was heard against the meant words. */
export function wordErrors(meant: string[], heard: string[]): number {
  return alignment(meant, heard).filter((s) => s.kind !== 'same').length;
}

/** Errors over meant words, for one text. */
export interface Tally {
  errors: number;
  words: number;
}

/** One perturbation (say a gain of +0.2 dB, applied alike to both sides): each text's tally for engine and raw voice. */
export interface PairedRun {
  label: string;
  engine: Tally[];
  raw: Tally[];
}

export interface GapSummary {
  /** Each perturbation's pooled word error (percent) for engine and raw voice, and engine minus raw (points). */
  runs: { label: string; engine: number; raw: number; gap: number }[];
  words: number;
  /** Engine minus raw in points: mean over the perturbations, sample standard deviation, lowest and highest. */
  mean: number;
  sd: number;
  min: number;
  max: number;
}

const pooled = (tallies: Tally[]) => {
  const words = tallies.reduce((sum, t) => sum + t.words, 0);
  return words === 0 ? 0 : (100 * tallies.reduce((sum, t) => sum + t.errors, 0)) / words;
};

/**
 * The engine against its raw voice as one figure that a single run's luck moves less: every text pooled (errors over
 * all meant words, so a long text weighs by its words), then averaged over perturbations that do not change what a
 * listener hears but do change what the recogniser writes.
 */
export function pooledGap(runs: PairedRun[]): GapSummary {
  if (runs.length === 0) throw new Error('pooledGap needs at least one run');
  const rows = runs.map((run) => {
    const engine = pooled(run.engine);
    const raw = pooled(run.raw);
    return { label: run.label, engine, raw, gap: engine - raw };
  });
  const gaps = rows.map((r) => r.gap);
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
  const sd = gaps.length < 2 ? 0 : Math.sqrt(gaps.reduce((sum, g) => sum + (g - mean) ** 2, 0) / (gaps.length - 1));
  return {
    runs: rows,
    words: runs[0]!.engine.reduce((sum, t) => sum + t.words, 0),
    mean,
    sd,
    min: Math.min(...gaps),
    max: Math.max(...gaps),
  };
}

/**
 * "Within `limit` points of the raw voice": judged on the mean; the note says whether every perturbation agrees
 * (the verdict is then beyond the noise the perturbations show) or the range straddles the limit.
 */
export function gapVerdict(summary: GapSummary, limit: number): { verdict: 'meets' | 'misses'; clear: boolean } {
  const verdict = summary.mean <= limit ? 'meets' : 'misses';
  const clear = verdict === 'meets' ? summary.max <= limit : summary.min > limit;
  return { verdict, clear };
}
