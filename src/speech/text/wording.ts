// Words the script says around the article's own: its sections, headings with their numbers, small tables row by
// row, a code block's language, titles for text without one, and short forms of long sentences.
import type { Article, Block } from '../source/article';
import { versionWords } from './normalize';
import { splitSentences } from './sentences';
import { numberToWords, toSpoken } from './spoken';

export interface Section {
  heading?: { text: string; level: number };
  blocks: Block[];
}

export function sectionsOf(article: Article): Section[] {
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

export function languageName(language: string | undefined): string | undefined {
  if (!language) return undefined;
  const known = LANGUAGE_NAMES[language.toLowerCase()];
  if (known) return known;
  // An unknown fence label ("text", "plaintext", "diff", "output") names no language worth saying.
  return /^(?:text|plain|plaintext|txt|output|none|diff|patch|log)$/i.test(language) ? undefined : language;
}

/** A small table is read aloud; a bigger one is only summarized (a listener cannot hold more). */
export const READ_TABLE_LIMIT = { rows: 6, columns: 4 };

export function joinWords(items: string[]): string {
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
export const FOOTNOTE = /^\s*\[\^?(\w{1,8})\]:?\s+(\S[\s\S]*)$/;

export const ORDINALS = ['First', 'Second', 'Third', 'Fourth', 'Fifth', 'Sixth', 'Seventh', 'Eighth', 'Ninth', 'Tenth'];

export function plural(n: number, one: string, many = `${one}s`): string {
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

export function shorten(text: string, maxWords: number): string {
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
