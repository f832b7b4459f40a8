// The script of a job: what each model says, in which voice, with which pauses. Article sentences keep their
// written form for the transcript and get a spoken form for the synthesizer; lines the show adds (greetings,
// hand-overs, summaries of code) are both written and spoken as they are.
import { type Article, type Block, countWords } from '../source/article';
import type { EngineModelId } from '../types';
import { splitSentences } from './sentences';
import { versionWords } from './normalize';
import { numberToWords, toSpoken } from './spoken';
import type { FliteVoice } from '../voice/synth-protocol';

export interface Voice {
  name: string;
  flite: FliteVoice;
  durationStretch?: number;
  /** Pitch spread in Hz (Flite's default for slt is about 20): wider is less monotone. */
  pitchSpread?: number;
  /** Questions, lists and headings get the intonation their text asks for (pitch.ts), bent after synthesis. */
  intonation?: boolean;
}

export interface ModelProfile {
  voices: Voice[];
  /** Pause after a sentence, a paragraph, a list item, before and after a heading (seconds). */
  sentencePause: number;
  paragraphPause: number;
  listItemPause: number;
  headingPauseBefore: number;
  headingPauseAfter: number;
  /** Whether section headings are announced with their number ("Section 2: …"). */
  numberSections: boolean;
  podcast: boolean;
  /** MP3 bitrate, bits per second. */
  bitrate: number;
  /** LAME's quality setting (lame.ts): 3 is LAME's default; 7 halves the encoding CPU but needs more bits. */
  lameQuality: number;
}

export const MODEL_PROFILES: Record<EngineModelId, ModelProfile> = {
  // The fastest clear voice, read straight through. kal16 is quick: at stretch 1.13 with 0.35 s between sentences and
  // 0.7 s between paragraphs it read prose at 187 words a minute. Listeners want about 165-175 with a reader's pauses
  // (about 0.4-0.7 s after a sentence, 0.8-1.2 s after a paragraph), so most of the time goes into pauses and a little
  // into the stretch: prose 172 wpm, technical 153, numeric 154 (their spelled letters and number words are slower
  // per word; one setting cannot put all three in range). Against a slower stretch alone (1.22, same prose pace) this
  // measured closer to the raw voice in word error: +0.6 points pooled over the three texts against +2.2, and the
  // old setting +2.9 (bench/listening.ts; BENCHMARKS.md, "fourth round"). Its 48 kbps at LAME quality 7 encodes for
  // half the CPU of quality 3 and measured the same word error as quality 3 at 32 kbps (22.7 % against 22.4 %, 842
  // words of medium.md, the same speech; quality 7 at 32 kbps: 32.1 %; BENCHMARKS.md, "Issue 14, third round").
  'article-audio-1-mini': {
    // No intonation: kal16's diphones give PSOLA unsteady pitch marks (three questions measured +9.7, -0.8 and -1.2
    // semitones at the end), so Mini is said as Flite says it.
    voices: [{ name: 'Narrator', flite: 'kal16', durationStretch: 1.16 }],
    sentencePause: 0.65,
    paragraphPause: 1.15,
    listItemPause: 0.5,
    // After a paragraph's 1.15 s: about 1.75 s of silence before a heading, near Pro's 1.6 s.
    headingPauseBefore: 0.6,
    headingPauseAfter: 0.6,
    numberSections: false,
    podcast: false,
    bitrate: 48_000,
    lameQuality: 7,
  },
  // The most intelligible voice (lowest word error rate measured), with room to breathe and numbered sections.
  'article-audio-1-pro': {
    // Questions, lists and headings get their intonation (pitch.ts): a yes/no question measured ending 4-5 semitones
    // above the line instead of 2-3 below it.
    voices: [{ name: 'Narrator', flite: 'rms', intonation: true }],
    sentencePause: 0.25,
    paragraphPause: 0.6,
    listItemPause: 0.35,
    headingPauseBefore: 1.0,
    headingPauseAfter: 0.6,
    numberSections: true,
    podcast: false,
    bitrate: 48_000,
    lameQuality: 3,
  },
  // Two clearly different voices (a male and a female one) sharing the article as a show.
  'article-podcast-1-pro': {
    voices: [
      { name: 'Alex', flite: 'rms', intonation: true },
      // slt is monotone by default (1.7 semitones of pitch variation against rms's 2.2); a wider spread measures 2.4.
      { name: 'Sam', flite: 'slt', pitchSpread: 45, intonation: true },
    ],
    sentencePause: 0.25,
    paragraphPause: 0.55,
    listItemPause: 0.35,
    headingPauseBefore: 0.8,
    headingPauseAfter: 0.5,
    numberSections: false,
    podcast: true,
    bitrate: 48_000,
    lameQuality: 3,
  },
};

export interface ScriptLine {
  /** As written (the transcript cue). */
  written: string;
  /** What the synthesizer says. */
  spoken: string;
  voice: number;
  pauseBefore: number;
  pauseAfter: number;
  /** The line opens a chapter with this title (a heading, or the article's start). */
  chapter?: { title: string; level: number };
  /** The line opens the k-th section (for progress messages). */
  section?: number;
  /** The line starts a paragraph of the text as written (the transcript marks it; the player starts a new one). */
  paragraph?: boolean;
  /** The line is a heading (or the title): said a little higher when the voice has intonation. */
  heading?: boolean;
  /**
   * The line ends an item of a list of two or more: "middle" before the last item (it ends level or a little
   * higher, not with a statement's fall), "last" on the last one (it falls). The item's earlier sentences are plain.
   */
  listItem?: 'middle' | 'last';
  /** The podcast line this was made from (a greeting, a hand-over), so an episode can use each at most twice. */
  template?: string;
}

interface Section {
  heading?: { text: string; level: number };
  blocks: Block[];
}

function sectionsOf(article: Article): Section[] {
  const headingLevels = article.blocks
    .filter((b) => b.kind === 'heading')
    .map((b) => (b.kind === 'heading' ? b.level : 9));
  const splitLevel = headingLevels.length > 0 ? Math.min(...headingLevels) : 0;
  const sections: Section[] = [{ blocks: [] }];
  for (const block of article.blocks) {
    if (block.kind === 'heading' && block.level <= splitLevel)
      sections.push({ heading: { text: block.text, level: block.level }, blocks: [] });
    else sections[sections.length - 1]!.blocks.push(block);
  }
  // A show without headings is one section; its hosts take turns every paragraph or two (turnsOf).
  return sections.filter((s) => s.heading || s.blocks.length > 0);
}

/** Code block languages as people say them (a fence's "js" would be read as a word). */
const LANGUAGE_NAMES: Record<string, string> = {
  js: 'JavaScript',
  javascript: 'JavaScript',
  jsx: 'JavaScript',
  mjs: 'JavaScript',
  ts: 'TypeScript',
  typescript: 'TypeScript',
  tsx: 'TypeScript',
  py: 'Python',
  python: 'Python',
  rb: 'Ruby',
  ruby: 'Ruby',
  rs: 'Rust',
  rust: 'Rust',
  go: 'Go',
  golang: 'Go',
  java: 'Java',
  kt: 'Kotlin',
  kotlin: 'Kotlin',
  swift: 'Swift',
  c: 'C',
  cpp: 'C plus plus',
  'c++': 'C plus plus',
  cs: 'C sharp',
  csharp: 'C sharp',
  php: 'PHP',
  sh: 'shell',
  bash: 'shell',
  zsh: 'shell',
  shell: 'shell',
  console: 'shell',
  powershell: 'PowerShell',
  ps1: 'PowerShell',
  sql: 'SQL',
  html: 'HTML',
  xml: 'XML',
  css: 'CSS',
  scss: 'SCSS',
  json: 'JSON',
  yaml: 'YAML',
  yml: 'YAML',
  toml: 'TOML',
  ini: 'INI',
  dockerfile: 'Dockerfile',
  md: 'Markdown',
  markdown: 'Markdown',
};

function languageName(language: string | undefined): string | undefined {
  if (!language) return undefined;
  const known = LANGUAGE_NAMES[language.toLowerCase()];
  if (known) return known;
  // An unknown fence label ("text", "plaintext", "diff", "output") names no language worth saying.
  return /^(?:text|plain|plaintext|txt|output|none|diff|patch|log)$/i.test(language) ? undefined : language;
}

/** A small table is read aloud; a bigger one is only summarized (a listener cannot hold more). */
export const READ_TABLE_LIMIT = { rows: 6, columns: 4 };

function joinWords(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/**
 * A small table as sentences, one per row (the first row of cells is taken as the header, as in Markdown and in
 * most pages): the first cell names the row, the others are said with their column
 * ("enabled: Default, true; Meaning, whether results are cached."). Undefined for a table too big to follow by ear.
 */
export function tableRows(table: Extract<Block, { kind: 'table' }>): string[] | undefined {
  const [header, ...rest] = table.cells ?? [];
  const body = rest.filter((row) => row.some((cell) => cell.trim()));
  if (!body || body.length === 0 || body.length > READ_TABLE_LIMIT.rows || table.columns > READ_TABLE_LIMIT.columns)
    return undefined;
  return body.map((row, r) => {
    const label = row[0]?.trim() || `Row ${r + 1}`;
    const rest = row.slice(1).map((cell, c) => {
      const name = header?.[c + 1]?.trim();
      const value = cell.trim() || 'empty';
      return name ? `${name}, ${value}` : value;
    });
    const line = rest.length > 0 ? `${label}: ${rest.join('; ')}` : label;
    return /[.!?]$/.test(line) ? line : `${line}.`;
  });
}

/** A heading's own number ("1. Introduction", "2.3 Results", "Chapter 4: Tests") and the rest of it. */
export function headingNumber(text: string): { number: string; rest: string } | undefined {
  const match = /^(?:(?:section|chapter|part|step)\s+)?(\d{1,3}(?:\.\d{1,3})*)\.?[:)]?\s+(\S.*)$/i.exec(text.trim());
  return match ? { number: match[1]!, rest: match[2]! } : undefined;
}

/** How a heading is said: "## 1. Introduction" -> "Section one: Introduction." (never "one: one"). */
export function headingSpoken(text: string, sectionNumber?: number): string {
  const own = headingNumber(text);
  if (own) return `Section ${versionWords(own.number)}: ${toSpoken(own.rest).replace(/[.:]$/, '')}.`;
  const spoken = toSpoken(text).replace(/[.:]$/, '');
  return sectionNumber === undefined ? `${spoken}.` : `Section ${numberToWords(sectionNumber)}: ${spoken}.`;
}

/** A footnote's text ("[^1]: The source.", "[2] See the report."): read at the end, not in the middle of the article. */
const FOOTNOTE = /^\s*\[\^?(\w{1,8})\]:?\s+(\S[\s\S]*)$/;

const ORDINALS = ['First', 'Second', 'Third', 'Fourth', 'Fifth', 'Sixth', 'Seventh', 'Eighth', 'Ninth', 'Tenth'];

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A title for text without one: its first heading, else its first sentence, cut to a few words. */
export function titleOf(article: Article): string {
  if (article.title?.trim()) return article.title.trim();
  const heading = article.blocks.find((b) => b.kind === 'heading');
  if (heading?.kind === 'heading') return shorten(headingNumber(heading.text)?.rest ?? heading.text, 10);
  const first = article.blocks.find((b) => b.kind === 'paragraph' || b.kind === 'quote');
  const sentence = first && 'text' in first ? splitSentences(first.text)[0] : undefined;
  return sentence ? shorten(sentence, 8) : 'Untitled text';
}

function shorten(text: string, maxWords: number): string {
  const words = text
    .replace(/[.!?:;,]+$/, '')
    .split(/\s+/)
    .filter(Boolean);
  if (words.length <= maxWords) return words.join(' ');
  let cut = words.slice(0, maxWords);
  // End on a word that carries meaning, not on "the", "of", "and".
  while (
    cut.length > 3 &&
    /^(?:a|an|the|of|and|or|to|in|on|for|with|by|at|from|is|are|was|were|that|this|its|their)$/i.test(
      cut[cut.length - 1]!,
    )
  )
    cut = cut.slice(0, -1);
  return cut.join(' ').replace(/[,;:]$/, '');
}

// ── The podcast's conversation ──────────────────────────────────────────────────────────────────────────────────

/** Words of a turn: at about 150 words a minute, 42 words is 17 s. A turn ends at a paragraph once it has this many. */
export const TURN_WORDS = 42;

/** Hand-over lines; each is used at most twice an episode ({h} a heading, {k} a topic, {n} a figure). */
export const HANDOVERS = {
  headingQuestion: [
    'What does the article say about {h}?',
    'Next up is {h}. What is the story there?',
    'Let us turn to {h}. Where does that start?',
    'And {h}? Take us through it.',
    'So, {h}. What did you find there?',
    'What comes under {h}?',
    'Shall we get to {h}?',
    'How does the part on {h} begin?',
  ],
  topicQuestion: [
    'And where does {k} come into it?',
    'What about {k}?',
    'How does {k} fit in?',
    'I am curious about {k}. What does it say?',
    'And {k}, where does that lead?',
    'Tell me about {k}.',
  ],
  figureReaction: [
    '{n}. That is a figure worth remembering.',
    '{n}, noted. Let me pick up from there.',
    'Right, {n}. And the article goes on.',
    '{n}. I did not expect that. Here is what follows.',
  ],
  topicReaction: [
    'So that is {k}. Here is the next part.',
    'Good point about {k}. It continues like this.',
    'That explains {k}. Now, listen to this.',
  ],
} as const;

type HandoverKind = keyof typeof HANDOVERS;

const STOPWORDS = new Set(
  (
    'a an the of and or to in on for with by at from is are was were be been being that this these those it its ' +
    'their there they them then than as but not no so if into over under about after before when where which who whom what why ' +
    'how also more most much many some such very just only can could would should will may might must do does did has have had ' +
    'our your his her we you he she one two all any each other own same new used using make makes made here'
  ).split(' '),
);

const VERB_LIKE =
  /^(?:shows|built|opens|needs|runs|says|makes|takes|uses|gives|keeps|finds|sends|reads|writes|plays|works|starts|stops|lists|offers|asks|goes|comes|beside|above|below|gets|sets|holds|turns|brings|seems|looks|means|becomes|stays|remains|helps|lets|allows|follows|calls|moves|changes|grows|falls|rises|saw|said|made|took|became|found|went|came|began|left)$/;

/** A topic worth asking about: a noun phrase after an article ("the local engine"), else a name in the text. */
export function topicOf(text: string): string | undefined {
  const sentence = splitSentences(text)[0] ?? text;
  for (const match of sentence.matchAll(
    /\b(?:the|a|an|your|its|their|this|our)\s+((?:[\p{L}-]+\s+){0,2}[\p{L}-]+)/giu,
  )) {
    const words = match[1]!.split(/\s+/);
    const end = words.findIndex((w) => STOPWORDS.has(w.toLowerCase()));
    const phrase = end < 0 ? words : words.slice(0, end);
    // A verb or adverb right after the noun ("the status bar shows") is not part of the topic.
    const verbs = phrase.findIndex((w, i) => i > 0 && VERB_LIKE.test(w));
    if (verbs > 0) phrase.splice(verbs);
    while (
      phrase.length > 0 &&
      (/ly$|ing$|ed$/.test(phrase[phrase.length - 1]!) || phrase[phrase.length - 1]!.length < 4)
    )
      phrase.pop();
    if (phrase.length > 0 && phrase.every((w) => /^[\p{Ll}-]+$/u.test(w))) return `the ${phrase.join(' ')}`;
  }
  const words = sentence.split(/\s+/).map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''));
  for (let i = 1; i < words.length; i++) {
    if (/^\p{Lu}\p{Ll}{2,}$/u.test(words[i]!) && !STOPWORDS.has(words[i]!.toLowerCase())) {
      let j = i;
      while (j + 1 < words.length && /^\p{Lu}\p{Ll}+$/u.test(words[j + 1]!)) j++;
      return words.slice(i, j + 1).join(' ');
    }
  }
  return undefined;
}

/** A figure in the text ("42 percent", "$3 million", "1990"), as written; not a version or an address. */
export function figureOf(text: string): string | undefined {
  for (const match of text.matchAll(
    /(?<![\w.])(?:[$€£]\s?)?\d[\d,.]*(?:%|\s(?:percent|per cent|million|billion|thousand|km|kg|years?|days?|hours?|minutes?|people|times)\b)?/gi,
  )) {
    const figure = match[0].replace(/[.,]+$/, '');
    if ((figure.match(/\./g) ?? []).length > 1 || /^\d{1,2}$/.test(figure)) continue;
    // A lone small number ("2", "one of 3") is not a figure anyone remembers.
    return figure;
  }
  return undefined;
}

class Handovers {
  private readonly used = new Map<string, number>();
  private readonly next: Record<HandoverKind, number> = {
    headingQuestion: 0,
    topicQuestion: 0,
    figureReaction: 0,
    topicReaction: 0,
  };

  /** The next unused-enough line of this kind with its blank filled, or undefined when all were used twice. */
  take(kind: HandoverKind, fill: Record<string, string>): { text: string; template: string } | undefined {
    const list = HANDOVERS[kind];
    for (let tries = 0; tries < list.length; tries++) {
      const template = list[this.next[kind] % list.length]!;
      this.next[kind]++;
      if ((this.used.get(template) ?? 0) >= 2) continue;
      this.used.set(template, (this.used.get(template) ?? 0) + 1);
      return { text: template.replace(/\{(\w)\}/g, (_m, key: string) => fill[key] ?? ''), template };
    }
    return undefined;
  }
}

function blockWords(block: Block): number {
  if (block.kind === 'paragraph' || block.kind === 'quote' || block.kind === 'heading') return countWords(block.text);
  if (block.kind === 'list') return block.items.reduce((n, item) => n + countWords(item), 0);
  if (block.kind === 'table') return (block.cells?.length ?? 1) * 12;
  return 15;
}

/** A long list cut between turns: where its part starts in the whole list, and how long the whole list is. */
const listParts = new WeakMap<Block, { first: number; total: number }>();
/** A small table read across turns: the rows (of tableRows) this part reads. */
const tableParts = new WeakMap<Block, { first: number; end: number }>();

/**
 * Sentences cut into pieces of even length, as near a turn's words as whole sentences allow: a 100-word paragraph
 * becomes pieces of about 33 words, not 42 and 58.
 */
function piecesOf(text: string): string[] {
  const sentences = splitSentences(text);
  const total = sentences.reduce((n, sentence) => n + countWords(sentence), 0);
  const target = total / Math.max(1, Math.round(total / TURN_WORDS));
  const pieces: string[] = [];
  let piece: string[] = [];
  let pieceWords = 0;
  for (const sentence of sentences) {
    const words = countWords(sentence);
    // End the piece here if taking this sentence would overshoot the target by more than stopping short of it.
    if (piece.length > 0 && pieceWords + words - target > target - pieceWords) {
      pieces.push(piece.join(' '));
      piece = [];
      pieceWords = 0;
    }
    piece.push(sentence);
    pieceWords += words;
  }
  if (piece.length > 0) pieces.push(piece.join(' '));
  return pieces;
}

/** The blocks of a section cut into turns of a paragraph or two; a long paragraph is cut at sentences, a long list between items. */
function turnsOf(blocks: Block[]): Block[][] {
  const turns: Block[][] = [];
  let turn: Block[] = [];
  let words = 0;
  const flush = () => {
    if (turn.length > 0) turns.push(turn);
    turn = [];
    words = 0;
  };
  for (const block of blocks) {
    if (block.kind === 'paragraph' && countWords(block.text) > TURN_WORDS * 1.5) {
      flush();
      for (const piece of piecesOf(block.text)) turns.push([{ kind: 'paragraph', text: piece }]);
      continue;
    }
    const rows = block.kind === 'table' ? tableRows(block) : undefined;
    if (rows && rows.reduce((n, row) => n + countWords(row), 0) > TURN_WORDS * 1.5) {
      flush();
      let first = 0;
      let rowWords = 0;
      rows.forEach((row, i) => {
        rowWords += countWords(row);
        if (rowWords >= TURN_WORDS || i === rows.length - 1) {
          const piece: Block = { ...block };
          tableParts.set(piece, { first, end: i + 1 });
          turns.push([piece]);
          first = i + 1;
          rowWords = 0;
        }
      });
      continue;
    }
    if (block.kind === 'list' && blockWords(block) > TURN_WORDS * 1.5) {
      flush();
      let first = 0;
      let items: string[] = [];
      let itemWords = 0;
      const part = () => {
        const piece: Block = { kind: 'list', ordered: block.ordered, items };
        listParts.set(piece, { first, total: block.items.length });
        turns.push([piece]);
        first += items.length;
        items = [];
        itemWords = 0;
      };
      for (const item of block.items) {
        if (items.length > 0 && itemWords + countWords(item) > TURN_WORDS * 1.2) part();
        if (countWords(item) > TURN_WORDS * 1.5) {
          // A long item: its first piece is read as the item, the rest as paragraphs in the next turns.
          const [head = item, ...rest] = piecesOf(item);
          items.push(head);
          part();
          for (const piece of rest) turns.push([{ kind: 'paragraph', text: piece }]);
          continue;
        }
        items.push(item);
        itemWords += countWords(item);
      }
      if (items.length > 0) part();
      continue;
    }
    if (turn.length > 0 && words + blockWords(block) > TURN_WORDS * 1.2) flush();
    turn.push(block);
    words += blockWords(block);
    if (words >= TURN_WORDS) flush();
  }
  flush();
  return turns;
}

function firstText(blocks: Block[]): string {
  for (const block of blocks) {
    if (block.kind === 'paragraph' || block.kind === 'quote') return block.text;
    if (block.kind === 'list' && block.items[0]) return block.items[0];
  }
  return '';
}

function allText(blocks: Block[]): string {
  return blocks
    .map((b) => (b.kind === 'paragraph' || b.kind === 'quote' ? b.text : b.kind === 'list' ? b.items.join(' ') : ''))
    .join(' ');
}

/** Builds the whole script of a job. Cheap: text only; the audio is made line by line later. */
export function buildScript(
  article: Article,
  modelId: EngineModelId,
): { profile: ModelProfile; lines: ScriptLine[]; sections: number } {
  const profile = MODEL_PROFILES[modelId];
  const lines: ScriptLine[] = [];
  // Set by a block reader so that the block's first line starts a paragraph in the transcript.
  let paragraphNext = false;
  const say = (
    written: string,
    voice: number,
    pauseAfter: number,
    extra: Partial<ScriptLine> = {},
    spoken = toSpoken(written),
  ) => {
    if (!spoken.replace(/[^\p{L}\p{N}]/gu, '')) return;
    lines.push({
      written,
      spoken,
      voice,
      pauseBefore: 0,
      pauseAfter,
      ...extra,
      ...(paragraphNext ? { paragraph: true } : {}),
    });
    paragraphNext = false;
  };
  const sentences = (text: string, voice: number, lastPause: number, first: Partial<ScriptLine> = {}) => {
    const parts = splitSentences(text);
    parts.forEach((sentence, i) =>
      say(sentence, voice, i === parts.length - 1 ? lastPause : profile.sentencePause, i === 0 ? first : {}),
    );
  };
  const generated = (text: string, voice: number, pauseAfter: number, extra: Partial<ScriptLine> = {}) => {
    paragraphNext = true;
    say(text, voice, pauseAfter, extra);
  };

  const readBlock = (block: Block, voice: number) => {
    paragraphNext = true;
    switch (block.kind) {
      case 'heading':
        say(
          block.text,
          voice,
          profile.headingPauseAfter,
          {
            pauseBefore: profile.headingPauseBefore,
            chapter: { title: block.text, level: block.level },
            heading: true,
          },
          headingSpoken(block.text),
        );
        break;
      case 'paragraph':
        sentences(block.text, voice, profile.paragraphPause);
        break;
      case 'quote':
        say('Quote:', voice, 0.2);
        sentences(block.text, voice, 0.3);
        say('End of quote.', voice, profile.paragraphPause);
        break;
      case 'list': {
        const part = listParts.get(block) ?? { first: 0, total: block.items.length };
        if (part.first === 0 && part.total >= 3) say(`A list of ${part.total} items.`, voice, 0.3);
        block.items.forEach((item, k) => {
          const i = part.first + k;
          paragraphNext = true;
          const last = k === block.items.length - 1;
          const pause = last ? profile.paragraphPause : profile.listItemPause;
          const end: Partial<ScriptLine> =
            part.total >= 2 ? { listItem: i === part.total - 1 ? 'last' : 'middle' } : {};
          const parts = splitSentences(item);
          const lead = !block.ordered ? '' : i < ORDINALS.length ? `${ORDINALS[i]}, ` : `Number ${i + 1}, `;
          parts.forEach((sentence, j) =>
            say(
              sentence,
              voice,
              j === parts.length - 1 ? pause : profile.sentencePause,
              j === parts.length - 1 ? end : {},
              j === 0 ? `${lead}${toSpoken(sentence)}` : toSpoken(sentence),
            ),
          );
        });
        break;
      }
      case 'code': {
        const language = languageName(block.language);
        say(
          `Here the article shows a code example${language ? ` in ${language}` : ''}, ${plural(block.lineCount, 'line')} long, which is not read aloud.`,
          voice,
          profile.paragraphPause,
        );
        break;
      }
      case 'table': {
        const all = tableRows(block);
        const part = tableParts.get(block);
        const rows = all && part ? all.slice(part.first, part.end) : all;
        if (!rows) {
          say(
            `Here the article has a table of ${plural(block.rows, 'row')} and ${plural(block.columns, 'column')}; see the text for its details.`,
            voice,
            profile.paragraphPause,
          );
          break;
        }
        if (!part || part.first === 0)
          say(
            `A table of ${plural(all!.length, 'row')}${block.cells?.[0] ? `: ${joinWords(block.cells[0].filter(Boolean))}` : ''}.`,
            voice,
            0.3,
          );
        rows.forEach((row, i) => {
          paragraphNext = true;
          say(row, voice, i === rows.length - 1 ? profile.paragraphPause : profile.listItemPause);
        });
        break;
      }
    }
  };

  // Footnotes are read after the article, not where their definitions happen to stand in the text.
  const footnotes: string[] = [];
  const body: Article = {
    ...article,
    blocks: article.blocks.filter((block) => {
      const note = block.kind === 'paragraph' ? FOOTNOTE.exec(block.text) : null;
      if (note) footnotes.push(note[2]!);
      return !note;
    }),
  };
  const title = titleOf(article);
  const sections = sectionsOf(body);

  if (profile.podcast) {
    podcastScript(body, title, sections, profile, generated, readBlock, lines);
  } else {
    if (article.title)
      say(
        article.title,
        0,
        profile.headingPauseAfter + 0.2,
        { chapter: { title: article.title, level: 1 }, paragraph: true, heading: true },
        `${toSpoken(article.title)}.`,
      );
    if (article.byline) generated(`By ${article.byline}.`, 0, profile.paragraphPause);
    let sectionNumber = 0;
    sections.forEach((section, index) => {
      const start = lines.length;
      if (section.heading) {
        sectionNumber++;
        paragraphNext = true;
        const spoken = headingSpoken(section.heading.text, profile.numberSections ? sectionNumber : undefined);
        say(
          section.heading.text,
          0,
          profile.headingPauseAfter,
          {
            pauseBefore: profile.headingPauseBefore,
            chapter: { title: section.heading.text, level: section.heading.level },
            heading: true,
          },
          spoken,
        );
      }
      for (const block of section.blocks) readBlock(block, 0);
      if (lines.length > start) lines[start]!.section = index + 1;
    });
    if (footnotes.length > 0) {
      paragraphNext = true;
      say(
        'Notes',
        0,
        profile.headingPauseAfter,
        { pauseBefore: profile.headingPauseBefore, chapter: { title: 'Notes', level: 2 }, heading: true },
        'Notes.',
      );
      footnotes.forEach((note) => readBlock({ kind: 'paragraph', text: note }, 0));
    }
  }
  const first = lines[0];
  if (first && !lines.some((l) => l.chapter)) first.chapter = { title, level: 1 };
  return { profile, lines, sections: sections.length };
}

/**
 * The two-host show: a greeting with the title, the article in short turns (a paragraph or two), hand-overs that
 * carry the article's own headings, topics and figures (a question is answered by the next host's turn), and a
 * recap of the sections before the sign-off.
 */
function podcastScript(
  article: Article,
  title: string,
  sections: Section[],
  profile: ModelProfile,
  generated: (text: string, voice: number, pauseAfter: number, extra?: Partial<ScriptLine>) => void,
  readBlock: (block: Block, voice: number) => void,
  lines: ScriptLine[],
): void {
  const [hostA, hostB] = [profile.voices[0]!.name, profile.voices[1]?.name ?? profile.voices[0]!.name];
  const handovers = new Handovers();
  const line = (text: string, voice: number, template: string, pause = 0.35, extra: Partial<ScriptLine> = {}) =>
    generated(text, voice, pause, { template, ...extra });

  line(`Hello, and welcome to Article Audio. I'm ${hostA}.`, 0, 'greeting', 0.35, {
    chapter: { title: 'Introduction', level: 1 },
  });
  const from = article.byline ? `, by ${article.byline}` : article.sourceLabel ? `, from ${article.sourceLabel}` : '';
  line(`And I'm ${hostB}. Today: “${title}”${from}.`, 1, 'introduction', 0.5);

  // The first host opens the article; after that the hosts alternate turns.
  let voice = 0;
  let previousTurn = '';
  sections.forEach((section, index) => {
    const start = lines.length;
    const turns = turnsOf(section.blocks);
    if (section.heading) {
      const heading = headingNumber(section.heading.text)?.rest ?? section.heading.text;
      const chapter = { title: section.heading.text, level: section.heading.level };
      const asker = index === 0 && lines.length <= 2 ? 1 : voice;
      const ask = handovers.take('headingQuestion', { h: heading });
      if (ask) {
        line(ask.text, asker, ask.template, 0.4, { chapter });
        voice = 1 - asker;
      } else {
        // Every question used twice: the next host names the part itself.
        voice = 1 - voice;
        generated(`${heading}.`, voice, profile.headingPauseAfter, {
          chapter,
          pauseBefore: profile.headingPauseBefore,
          heading: true,
        });
      }
    } else if (index > 0) {
      voice = 1 - voice;
    }
    turns.forEach((turn, t) => {
      if (t > 0) {
        // Hand over within a section: the listener reacts to a figure or topic just heard, or asks about what comes.
        const listener = 1 - voice;
        const figure = figureOf(previousTurn);
        const topicNext = topicOf(firstText(turn));
        const reaction = figure ? handovers.take('figureReaction', { n: figure }) : undefined;
        if (reaction) {
          line(reaction.text, listener, reaction.template, 0.3);
        } else {
          const ask = topicNext ? handovers.take('topicQuestion', { k: topicNext }) : undefined;
          if (ask) {
            line(ask.text, voice, ask.template, 0.35);
          } else {
            const topicBefore = topicOf(previousTurn);
            const react = topicBefore ? handovers.take('topicReaction', { k: topicBefore }) : undefined;
            if (react) line(react.text, listener, react.template, 0.3);
          }
        }
        voice = listener;
      }
      for (const block of turn) readBlock(block, voice);
      previousTurn = allText(turn);
    });
    if (lines.length > start) lines[start]!.section = index + 1;
  });

  const headings = sections.flatMap((s) => (s.heading ? [headingNumber(s.heading.text)?.rest ?? s.heading.text] : []));
  const recapper = 1 - voice;
  if (headings.length >= 2) {
    const named = headings.length > 6 ? [...headings.slice(0, 5), `${headings.length - 5} more parts`] : headings;
    line(`That was “${title}”. We covered ${joinWords(named)}.`, recapper, 'recap', 0.4, {
      chapter: { title: 'Recap', level: 1 },
    });
  } else {
    const opening = shorten(firstText(sections.flatMap((s) => s.blocks)), 8);
    line(
      `That was “${title}”${opening && opening !== title ? `, which began: ${opening}` : ''}.`,
      recapper,
      'recap',
      0.4,
      { chapter: { title: 'Recap', level: 1 } },
    );
  }
  line('Thanks for listening to Article Audio. Until next time, goodbye!', 1 - recapper, 'goodbye', 0.2);
}
