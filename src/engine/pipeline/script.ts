// The script of a job: what each model says, in which voice, with which pauses. Article sentences keep their
// written form for the transcript and get a spoken form for the synthesizer; lines the show adds (greetings,
// hand-overs, summaries of code) are both written and spoken as they are.
import type { Article, Block } from './article';
import type { EngineModelId } from './types';
import { splitSentences } from './sentences';
import { toSpoken } from './spoken';
import type { FliteVoice } from './synth-protocol';

export interface Voice {
  name: string;
  flite: FliteVoice;
  durationStretch?: number;
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
}

export const MODEL_PROFILES: Record<EngineModelId, ModelProfile> = {
  // The fastest clear voice, read straight through.
  'article-audio-1-mini': {
    voices: [{ name: 'Narrator', flite: 'kal16' }],
    sentencePause: 0.12,
    paragraphPause: 0.3,
    listItemPause: 0.2,
    headingPauseBefore: 0.4,
    headingPauseAfter: 0.25,
    numberSections: false,
    podcast: false,
    bitrate: 32_000,
  },
  // The most intelligible voice (lowest word error rate measured), with room to breathe and numbered sections.
  'article-audio-1-pro': {
    voices: [{ name: 'Narrator', flite: 'rms' }],
    sentencePause: 0.25,
    paragraphPause: 0.6,
    listItemPause: 0.35,
    headingPauseBefore: 1.0,
    headingPauseAfter: 0.6,
    numberSections: true,
    podcast: false,
    bitrate: 48_000,
  },
  // Two clearly different voices (a male and a female one) sharing the article as a show.
  'article-podcast-1-pro': {
    voices: [
      { name: 'Alex', flite: 'rms' },
      { name: 'Sam', flite: 'slt' },
    ],
    sentencePause: 0.25,
    paragraphPause: 0.55,
    listItemPause: 0.35,
    headingPauseBefore: 0.8,
    headingPauseAfter: 0.5,
    numberSections: false,
    podcast: true,
    bitrate: 48_000,
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
}

interface Section {
  heading?: { text: string; level: number };
  blocks: Block[];
}

function sectionsOf(article: Article, podcast: boolean): Section[] {
  const headingLevels = article.blocks.filter((b) => b.kind === 'heading').map((b) => (b.kind === 'heading' ? b.level : 9));
  const splitLevel = headingLevels.length > 0 ? Math.min(...headingLevels) : 0;
  const sections: Section[] = [{ blocks: [] }];
  for (const block of article.blocks) {
    if (block.kind === 'heading' && block.level <= splitLevel) sections.push({ heading: { text: block.text, level: block.level }, blocks: [] });
    else sections[sections.length - 1]!.blocks.push(block);
  }
  const result = sections.filter((s) => s.heading || s.blocks.length > 0);
  // A show needs turns: without headings, hosts take turns every few paragraphs.
  if (podcast && headingLevels.length === 0) {
    const turns: Section[] = [];
    const all = result.flatMap((s) => s.blocks);
    for (let i = 0; i < all.length; i += 4) turns.push({ blocks: all.slice(i, i + 4) });
    return turns;
  }
  return result;
}

/** Code block languages as people say them (a fence's "js" would be read as a word). */
const LANGUAGE_NAMES: Record<string, string> = {
  js: 'JavaScript', javascript: 'JavaScript', jsx: 'JavaScript', mjs: 'JavaScript', ts: 'TypeScript', typescript: 'TypeScript',
  tsx: 'TypeScript', py: 'Python', python: 'Python', rb: 'Ruby', ruby: 'Ruby', rs: 'Rust', rust: 'Rust', go: 'Go',
  golang: 'Go', java: 'Java', kt: 'Kotlin', kotlin: 'Kotlin', swift: 'Swift', c: 'C', cpp: 'C plus plus', 'c++': 'C plus plus',
  cs: 'C sharp', csharp: 'C sharp', php: 'PHP', sh: 'shell', bash: 'shell', zsh: 'shell', shell: 'shell', console: 'shell',
  powershell: 'PowerShell', ps1: 'PowerShell', sql: 'SQL', html: 'HTML', xml: 'XML', css: 'CSS', scss: 'SCSS',
  json: 'JSON', yaml: 'YAML', yml: 'YAML', toml: 'TOML', ini: 'INI', dockerfile: 'Dockerfile', md: 'Markdown', markdown: 'Markdown',
};

function languageName(language: string | undefined): string | undefined {
  if (!language) return undefined;
  const known = LANGUAGE_NAMES[language.toLowerCase()];
  if (known) return known;
  // An unknown fence label ("text", "plaintext", "diff", "output") names no language worth saying.
  return /^(?:text|plain|plaintext|txt|output|none|diff|patch|log)$/i.test(language) ? undefined : language;
}

const ORDINALS = ['First', 'Second', 'Third', 'Fourth', 'Fifth', 'Sixth', 'Seventh', 'Eighth', 'Ninth', 'Tenth'];

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Builds the whole script of a job. Cheap: text only; the audio is made line by line later. */
export function buildScript(article: Article, modelId: EngineModelId): { profile: ModelProfile; lines: ScriptLine[]; sections: number } {
  const profile = MODEL_PROFILES[modelId];
  const lines: ScriptLine[] = [];
  const say = (written: string, voice: number, pauseAfter: number, extra: Partial<ScriptLine> = {}, spoken = toSpoken(written)) => {
    if (!spoken.replace(/[^\p{L}\p{N}]/gu, '')) return;
    lines.push({ written, spoken, voice, pauseBefore: 0, pauseAfter, ...extra });
  };
  const sentences = (text: string, voice: number, lastPause: number, first: Partial<ScriptLine> = {}) => {
    const parts = splitSentences(text);
    parts.forEach((sentence, i) => say(sentence, voice, i === parts.length - 1 ? lastPause : profile.sentencePause, i === 0 ? first : {}));
  };
  const generated = (text: string, voice: number, pauseAfter: number, extra: Partial<ScriptLine> = {}) => say(text, voice, pauseAfter, extra);

  const readBlock = (block: Block, voice: number) => {
    switch (block.kind) {
      case 'heading':
        say(block.text, voice, profile.headingPauseAfter, { pauseBefore: profile.headingPauseBefore, chapter: { title: block.text, level: block.level } }, `${toSpoken(block.text)}.`);
        break;
      case 'paragraph':
        sentences(block.text, voice, profile.paragraphPause);
        break;
      case 'quote':
        generated('Quote:', voice, 0.2);
        sentences(block.text, voice, 0.3);
        generated('End of quote.', voice, profile.paragraphPause);
        break;
      case 'list':
        if (block.items.length >= 3) generated(`A list of ${block.items.length} items.`, voice, 0.3);
        block.items.forEach((item, i) => {
          const last = i === block.items.length - 1;
          const pause = last ? profile.paragraphPause : profile.listItemPause;
          if (block.ordered) {
            const lead = i < ORDINALS.length ? `${ORDINALS[i]}, ` : `Number ${i + 1}, `;
            const parts = splitSentences(item);
            parts.forEach((sentence, j) => say(sentence, voice, j === parts.length - 1 ? pause : profile.sentencePause, {}, j === 0 ? `${lead}${toSpoken(sentence)}` : toSpoken(sentence)));
          } else {
            sentences(item, voice, pause);
          }
        });
        break;
      case 'code': {
        const language = languageName(block.language);
        generated(`Here the article shows a code example${language ? ` in ${language}` : ''}, ${plural(block.lineCount, 'line')} long, which is not read aloud.`, voice, profile.paragraphPause);
        break;
      }
      case 'table':
        generated(`Here the article has a table of ${plural(block.rows, 'row')} and ${plural(block.columns, 'column')}; see the text for its details.`, voice, profile.paragraphPause);
        break;
    }
  };

  const title = article.title ?? 'your article';
  const sections = sectionsOf(article, profile.podcast);
  const [a, b] = [0, profile.voices.length > 1 ? 1 : 0];
  const hostA = profile.voices[a]!.name;
  const hostB = profile.voices[b]!.name;

  if (profile.podcast) {
    generated(`Hello, and welcome to Article Audio. I'm ${hostA}.`, a, 0.35, { chapter: { title: 'Introduction', level: 1 } });
    const from = article.byline ? `, by ${article.byline}` : article.sourceLabel ? `, from ${article.sourceLabel}` : '';
    generated(`And I'm ${hostB}. Today we're reading “${title}”${from}.`, b, 0.35);
    generated(`Let's get into it.`, a, 0.6);
  } else {
    if (article.title) say(article.title, 0, profile.headingPauseAfter + 0.2, { chapter: { title: article.title, level: 1 } }, `${toSpoken(article.title)}.`);
    if (article.byline) say(`By ${article.byline}.`, 0, profile.paragraphPause);
  }

  let sectionNumber = 0;
  sections.forEach((section, index) => {
    const voice = profile.podcast ? index % 2 : 0;
    const start = lines.length;
    if (profile.podcast && index > 0) {
      const previous = (index - 1) % 2;
      const name = profile.voices[voice]!.name;
      if (section.heading) generated(`${name}, will you take us through the next part: ${section.heading.text}?`, previous, 0.35);
      else generated(`${name}, over to you.`, previous, 0.35);
      generated(index % 4 === 1 ? 'Gladly.' : 'Sure.', voice, 0.3);
    }
    if (section.heading) {
      sectionNumber++;
      const spoken = profile.numberSections ? `Section ${sectionNumber}: ${toSpoken(section.heading.text)}.` : `${toSpoken(section.heading.text)}.`;
      say(section.heading.text, voice, profile.headingPauseAfter, { pauseBefore: profile.headingPauseBefore, chapter: { title: section.heading.text, level: section.heading.level } }, spoken);
    }
    for (const block of section.blocks) readBlock(block, voice);
    if (lines.length > start) lines[start]!.section = index + 1;
  });

  if (profile.podcast) {
    const last = (sections.length - 1 + 2) % 2;
    const other = 1 - last;
    generated(`And that's the end of “${title}”.`, last, 0.35);
    generated(`Thanks for listening to Article Audio. Until next time, goodbye!`, other, 0.2);
  }
  const first = lines[0];
  if (first && !lines.some((l) => l.chapter)) first.chapter = { title, level: 1 };
  return { profile, lines, sections: sections.length };
}
