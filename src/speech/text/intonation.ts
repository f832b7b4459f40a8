// Intonation a line's text asks for (intonationOf): a yes/no question ends on a rise, the items of a list before the
// last rise a little and the last falls, a heading stands a little higher. Text only, computed on the main thread
// from the spoken line; the voice applies it to the audio after synthesis (src/speech/voice/pitch.ts).

/** What the text of a line asks for. Computed on the main thread from the spoken line; applied in the worker. */
export interface Intonation {
  /** A yes/no question: the pitch rises from the last word's first full vowel to the end. */
  rise?: boolean;
  /** The word a rise (a question's, or a list item's that continues) starts on, said alone to count its phones. */
  lastWord?: string;
  /**
   * List items before the last end at pauses; each is counted back from the end of the line (1 = the last pause
   * inside the line's last utterance).
   */
  listPauses?: number[];
  /**
   * The list's last item with its "and" or "or" when no comma (and so no pause) comes before them ("pears and
   * plums"): the item before rises up to where they start, found by their phones as Flite says them alone.
   */
  lastItem?: string;
  /** The line ends a list: its last syllable falls (Flite ends some statements nearly level). */
  fall?: boolean;
  /**
   * The line ends an item of a list with more items to come (a Markdown list's lines): the last word rises a
   * little from its first full vowel, as a reader keeps the voice up between items, instead of a statement's fall.
   */
  continues?: boolean;
  /** Semitones the whole line is raised (headings). */
  lift?: number;
}

/** A yes/no question's final rise. Spoken questions rise 4-8 semitones; 6 is clear without sounding sung. */
export const QUESTION_RISE = 6;
/** A non-final list item's continuation rise: slight, so it reads as "more to come", not as a question. */
export const LIST_RISE = 4;
/** The fall on a list's last item. */
export const LIST_FALL = -3;
/** A heading said a little higher than the text around it. */
export const HEADING_LIFT = 1.5;

const WH_WORDS = new Set(['what', 'who', 'whom', 'whose', 'which', 'where', 'when', 'why', 'how']);
/** Words that may open a question before its real first word ("So, is it…", "And what…"). */
const OPENERS = new Set(['so', 'and', 'but', 'then', 'now', 'well', 'okay', 'ok', 'oh', 'or']);
/** The longest line this looks into: lines are sentences; a longer one gets no intonation rather than a slow scan. */
const MAX_TEXT = 2000;

function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
}

/** The last sentence of a line (Flite says each as an utterance of its own), without its final punctuation. */
function lastSentence(text: string): string {
  const body = text.replace(/[\s.!?]+$/u, '');
  const cut = Math.max(body.lastIndexOf('. '), body.lastIndexOf('! '), body.lastIndexOf('? '));
  return cut >= 0 ? body.slice(cut + 2) : body;
}

/**
 * Whether a question asks yes or no (rises) rather than for a fact (a wh-question) or between alternatives
 * ("… tea or coffee?"), both of which fall as a statement does.
 */
function asksYesOrNo(question: string): boolean {
  // The question is what follows a colon or semicolon ("…the next part: Tests?" asks about Tests).
  const clauses = question.split(/[:;]/);
  const clause = clauses[clauses.length - 1]!;
  // A name or opener before a comma ("Sam, what do you…") does not make the question.
  const parts = clause.split(',');
  let words = wordsOf(parts[0]!);
  if (parts.length > 1 && words.length <= 2 && !words.some((w) => WH_WORDS.has(w))) words = wordsOf(parts[1]!);
  while (words.length > 1 && OPENERS.has(words[0]!)) words = words.slice(1);
  if (words.length === 0) return false;
  if (WH_WORDS.has(words[0]!)) return false;
  if (wordsOf(clause).includes('or')) return false;
  return true;
}

/** A list found at the end of a sentence: where its items before the last end. */
interface ListShape {
  /** Pauses at the commas after items, counted back from the end of the line (1 = the last pause). */
  pauses: number[];
  /** The last item with its "and" or "or", when no comma comes before them ("pears and plums"). */
  lastItem?: string;
}

/**
 * Words that open a sentence before its subject ("In Paris, Berlin and Rome are…", "Yes, I think so and…"): a first
 * part starting with one is no list item when only one comma follows.
 */
const LEADS = new Set([
  ...OPENERS,
  ...WH_WORDS,
  ...(
    'yes no hello hi thanks sure however also first second third finally still instead meanwhile ' +
    'otherwise therefore thus today yesterday tomorrow here there in on at for with by from after before ' +
    'since because if unless until although though while as once during like unlike besides despite to of ' +
    'over under without within through whether last next this that every each most some many one good ' +
    'welcome dear thank sorry please anyway again later earlier soon above below according given note ' +
    'remember say imagine suppose indeed even only just ah hey'
  ).split(' '),
]);
/** A word that opens a sentence on its own before a comma, never a list's first item. */
const INTERJECTIONS = new Set(
  'yes no well oh ah okay ok hello hi hey thanks sure however so now then and but or'.split(' '),
);
/** Words that make a clause of what follows the comma ("… Berlin and Rome are big"), not a list's items. */
const CLAUSE_WORDS = new Set(
  (
    'i you he she it we they me him us them this that these those there is are was were be been being am ' +
    "isn't aren't wasn't weren't it's i'm we're they're you're that's there's has have had do does did " +
    "don't doesn't didn't will would can could should shall may might must can't won't not to which who " +
    'so then if when because than'
  ).split(' '),
);

/**
 * The list at the end of a sentence ("… eggs, milk, and bread."), if there is one. A list needs three items or more,
 * the last joined by "and" or "or", the items between short. Lines with other punctuation after the list's start are
 * left alone: Flite pauses at quotes and brackets too, and the count back from the end must meet only the list's
 * commas. Without the serial comma ("apples, pears and plums") the one comma could as well end an opening phrase
 * ("In Paris, Berlin and Rome are…"), so that shape is a list only when the part before the comma does not open with
 * a lead word and the two items after it are short and hold no pronoun or verb that would make them a clause.
 */
function listOf(sentence: string): ListShape | undefined {
  const parts = sentence.split(',');
  if (parts.length < 2) return undefined;
  const lastPart = parts[parts.length - 1]!;
  const last = wordsOf(lastPart);
  const joined = last[0] === 'and' || last[0] === 'or';
  // Without the serial comma the last two items share a part ("milk and bread"): its first item has no pause.
  const joins = last.filter((w) => w === 'and' || w === 'or').length;
  const shared = !joined && joins === 1;
  if (!joined && !shared) return undefined;
  if (last.length > 6 + (shared ? 6 : 0)) return undefined;
  // Items between the first and the last: short (a noun phrase, not a clause).
  let first = parts.length - 2;
  while (first >= 1 && wordsOf(parts[first]!).length <= 4 && wordsOf(parts[first]!).length > 0) first--;
  // "Yes, …" or "Well, …" before the list is no item of it.
  const opening = wordsOf(parts[first]!);
  if (opening.length === 1 && INTERJECTIONS.has(opening[0]!) && first < parts.length - 2) first++;
  const middle = parts.length - 2 - first;
  if (middle + 1 + (shared ? 2 : 1) < 3) return undefined;
  let lastItem: string | undefined;
  if (shared) {
    const at = /\b(?:and|or)\b/iu.exec(lastPart)!;
    const before = wordsOf(lastPart.slice(0, at.index));
    const item = lastPart.slice(at.index).replace(/[\s.!?;:]+$/u, '');
    const after = wordsOf(item).slice(1);
    if (before.length === 0 || after.length === 0) return undefined;
    if (middle === 0) {
      // The clause the first item ends ("…; for your own Markdown, remove it or…" opens with "for").
      const lead = wordsOf(parts[first]!.split(/[;:.!?()"]/u).at(-1)!);
      const clause = [...before, ...after].some((w) => CLAUSE_WORDS.has(w));
      const opener = lead[0] === undefined || LEADS.has(lead[0]) || /^\p{N}/u.test(lead[0]);
      if (opener || (lead.length === 1 && lead[0]!.endsWith('ly'))) return undefined;
      if (before.length > 3 || after.length > 3 || clause) return undefined;
    }
    if (before.length <= 4 && after.length <= 6) lastItem = item;
  }
  // From the first item's comma on, only the list's commas may make Flite pause.
  const tail = parts.slice(first + 1).join(',');
  if (/[^\p{L}\p{N}\s',]/u.test(tail)) return undefined;
  // Commas from the first item's end to the last: counted back from the end, 1 is the comma before the last part.
  const commas = parts.length - 1 - first;
  return { pauses: Array.from({ length: commas }, (_, i) => commas - i), ...(lastItem ? { lastItem } : {}) };
}

/**
 * What intonation a spoken line asks for, or undefined for a plain statement. `listItem` says the line ends an item
 * of a list (ScriptLine.listItem): before the last it continues, the last falls; a question keeps its own rule.
 */
export function intonationOf(
  text: string,
  options: { heading?: boolean; listItem?: 'middle' | 'last' } = {},
): Intonation | undefined {
  if (text.length > MAX_TEXT) return undefined;
  const intonation: Intonation = {};
  if (options.heading) intonation.lift = HEADING_LIFT;
  const trimmed = text.trim();
  const sentence = lastSentence(trimmed);
  const question = /\?["')\]]*$/u.test(trimmed);
  const list = listOf(sentence);
  if (list) {
    intonation.listPauses = list.pauses;
    if (list.lastItem) intonation.lastItem = list.lastItem;
    intonation.fall = true;
  }
  const last = wordsOf(sentence).at(-1);
  if (question && !list && asksYesOrNo(sentence)) {
    if (last) {
      intonation.rise = true;
      intonation.lastWord = last;
    }
  } else if (!question && options.listItem === 'middle' && last) {
    // The item's end rises instead of falling, its own list's fall included.
    delete intonation.fall;
    intonation.continues = true;
    intonation.lastWord = last;
  } else if (!question && options.listItem === 'last') {
    intonation.fall = true;
  }
  return Object.keys(intonation).length > 0 ? intonation : undefined;
}
