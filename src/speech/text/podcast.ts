// The podcast's conversation (article-podcast-1-pro): the article shared between two hosts in turns of a paragraph
// or two, hand-overs filled with the article's headings, topics and figures, and a recap before the sign-off.
// buildScript (script.ts) reads the blocks of each turn as the narration does.
import { type Article, type Block, countWords } from '../source/article';
import type { ModelProfile, ScriptLine } from './profiles';
import { splitSentences } from './sentences';
import { type Section, headingNumber, joinWords, shorten, tableRows } from './wording';

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
export const listParts = new WeakMap<Block, { first: number; total: number }>();
/** A small table read across turns: the rows (of tableRows) this part reads. */
export const tableParts = new WeakMap<Block, { first: number; end: number }>();

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

/**
 * The two-host show: a greeting with the title, the article in short turns (a paragraph or two), hand-overs that
 * carry the article's own headings, topics and figures (a question is answered by the next host's turn), and a
 * recap of the sections before the sign-off.
 */
export function podcastScript(
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
