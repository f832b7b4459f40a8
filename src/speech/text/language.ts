// The language an article is written in, detected offline (franc-min: character trigrams of the 82 languages with the
// most speakers). The built-in voices read English only; a job whose article is clearly in another language is
// refused unless a provider voice reads it (src/speech/index.ts).
//
// Detection runs in the parse worker that read the article (article-facts.ts), on a bounded sample of its prose (at
// most SAMPLE_CHUNKS chunks of CHUNK_CHARACTERS, spread over the article): up to some 40 ms in a fresh thread whatever
// the article's length, which on the engine's main thread was its longest stall as a long job started (issue 30). Code blocks and
// tables are left out, so an English technical article with code stays English.
import type * as Franc from 'franc-min';
import type { Article } from '../source/article';

/** Chunks of prose judged one by one, spread evenly over the article. */
export const SAMPLE_CHUNKS = 12;
/** Characters of each chunk (a paragraph is cut there). */
export const CHUNK_CHARACTERS = 500;
/** Fewer letters than this in the whole sample: too little to tell, the article counts as English. */
export const MIN_SAMPLE_LETTERS = 200;
/** A chunk with fewer letters than this is not judged on its own (a heading, a name, a short quote). */
const MIN_CHUNK_LETTERS = 40;
/** Share of the judged chunks' letters that must be in the detected language (a foreign quote is one chunk of many). */
export const MIN_AGREEING_SHARE = 0.6;
/**
 * franc scores every candidate relative to the best (1): a runner-up at or above this, in a chunk, is too close to
 * call (Spanish and Galician, Dutch and Afrikaans on little text).
 */
export const MAX_RUNNER_UP = 0.97;

export interface DetectedLanguage {
  /** ISO 639-3 (franc's), which for the languages concerned is also ISO 639-2/T, the ID3 TLAN code: "deu". */
  iso639_3: string;
  /** BCP 47 / ISO 639-1 where there is one: "de". */
  tag: string;
  /** In English words: "German". */
  name: string;
}

export interface LanguageVerdict {
  /** The language the article is written in; undefined when the sample is too short or the detector is unsure. */
  language?: DetectedLanguage;
  /** Letters in the sample judged. */
  sampleLetters: number;
  /** Share of the judged chunks' letters in the detected language (0-1). */
  agreeing: number;
}

const LETTER = /\p{L}/gu;
function letters(text: string): number {
  return text.match(LETTER)?.length ?? 0;
}

// franc-min builds its trigram tables of 82 languages as it loads, and Intl.DisplayNames loads ICU's names (together
// some 30 ms of CPU in a profile of an engine start): both at first use, not in every process that imports this
// module and detects nothing (the engine's main thread, which only reads the parse worker's verdict, and every
// command-line command). `require`, not `import()`: detection is synchronous, and the bundle defers a required
// module's evaluation (as parse-worker.ts).
let franc: typeof Franc | undefined;
function francAll(text: string, options: Parameters<typeof Franc.francAll>[1]): ReturnType<typeof Franc.francAll> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  franc ??= require('franc-min') as typeof Franc;
  return franc.francAll(text, options);
}
let names: Intl.DisplayNames | undefined;

/** The tag and English name of an ISO 639-3 code (Intl knows the aliases: deu -> de, cmn -> zh). */
export function describeLanguage(iso639_3: string): DetectedLanguage {
  let tag = iso639_3;
  try {
    tag = Intl.getCanonicalLocales(iso639_3)[0] ?? iso639_3;
  } catch {
    // not a tag Intl knows: keep the 3-letter code
  }
  let name: string | undefined;
  try {
    name = (names ??= new Intl.DisplayNames('en', { type: 'language' })).of(tag);
  } catch {
    name = undefined;
  }
  return { iso639_3, tag, name: name && name !== tag ? name : iso639_3 };
}

/** The prose of an article, block by block: paragraphs, headings, list items and quotes (not code, not tables). */
function proseOf(article: Article): string[] {
  const prose: string[] = [];
  for (const block of article.blocks) {
    if (block.kind === 'paragraph' || block.kind === 'quote' || block.kind === 'heading') prose.push(block.text);
    else if (block.kind === 'list') prose.push(block.items.join('. '));
  }
  return prose;
}

/** Up to SAMPLE_CHUNKS chunks of at most CHUNK_CHARACTERS, taken evenly from the prose. */
export function sampleChunks(prose: readonly string[]): string[] {
  // Short neighbouring blocks are joined so that a chunk has enough letters to judge.
  const joined: string[] = [];
  let current = '';
  for (const text of prose) {
    current = current ? `${current} ${text}` : text;
    if (current.length >= CHUNK_CHARACTERS / 2) {
      joined.push(current);
      current = '';
    }
  }
  if (current) joined.push(current);
  const step = Math.max(1, joined.length / SAMPLE_CHUNKS);
  const chunks: string[] = [];
  for (let i = 0; i < joined.length && chunks.length < SAMPLE_CHUNKS; i += step)
    chunks.push(joined[Math.floor(i)]!.slice(0, CHUNK_CHARACTERS));
  return chunks;
}

/** franc's best guess for a text, or undefined when the runner-up is too close. */
function guess(text: string): string | undefined {
  const [best, second] = francAll(text, { minLength: 10 });
  if (!best || best[0] === 'und') return undefined;
  if (second && second[1] >= MAX_RUNNER_UP) return undefined;
  return best[0];
}

/**
 * The language of texts judged chunk by chunk (exported for the threshold tests): each chunk votes with its letters
 * for franc's guess (or for nobody when too close to call); the language with most votes must hold
 * MIN_AGREEING_SHARE of the judged letters. Chunks, not the whole sample, because franc's scores crowd together on
 * long text (on 2,000 characters of English the runner-up scores 0.98 of the best).
 */
export function detectInChunks(chunks: readonly string[]): LanguageVerdict {
  const sampleLetters = chunks.reduce((sum, chunk) => sum + letters(chunk), 0);
  if (sampleLetters < MIN_SAMPLE_LETTERS) return { sampleLetters, agreeing: 0 };
  // Short chunks (a heading, a caption) are joined to the next so that every judged text has enough letters.
  const judgedTexts: string[] = [];
  let pending = '';
  for (const chunk of chunks) {
    pending = pending ? `${pending} ${chunk}` : chunk;
    if (letters(pending) >= MIN_CHUNK_LETTERS) {
      judgedTexts.push(pending);
      pending = '';
    }
  }
  if (pending && judgedTexts.length > 0) judgedTexts[judgedTexts.length - 1] += ` ${pending}`;
  else if (pending) judgedTexts.push(pending);
  const votes = new Map<string, number>();
  let judged = 0;
  for (const text of judgedTexts) {
    const count = letters(text);
    judged += count;
    const language = guess(text);
    if (language) votes.set(language, (votes.get(language) ?? 0) + count);
  }
  let best: string | undefined;
  let most = 0;
  for (const [language, count] of votes)
    if (count > most) {
      best = language;
      most = count;
    }
  const share = judged === 0 ? 0 : most / judged;
  if (!best || share < MIN_AGREEING_SHARE) return { sampleLetters, agreeing: share };
  return { language: describeLanguage(best), sampleLetters, agreeing: share };
}

/** The language of an article's prose (see the thresholds above). */
export function detectLanguage(article: Article): LanguageVerdict {
  const title = article.title ? [article.title] : [];
  return detectInChunks(sampleChunks([...title, ...proseOf(article)]));
}

/** Whether a verdict says the article is clearly in a language other than English. */
export function isClearlyNotEnglish(verdict: LanguageVerdict): verdict is LanguageVerdict & {
  language: DetectedLanguage;
} {
  return verdict.language !== undefined && verdict.language.iso639_3 !== 'eng';
}
