// The article as the pipeline understands it, whatever it came from (a web page, Markdown or plain text).
import { storableText } from '../../protocol/text';

export type Block =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'list'; ordered: boolean; items: string[] }
  | { kind: 'quote'; text: string }
  /** `text`: the code itself, kept for the Markdown of a converted file; it is summarized, never read aloud. */
  | { kind: 'code'; language?: string; lineCount: number; text?: string }
  /** `cells`: the table's text row by row, when the source had it. */
  | { kind: 'table'; rows: number; columns: number; cells?: string[][] };

export interface Article {
  title?: string;
  byline?: string;
  /** Where the article came from, for the greeting and logs (a host name or "your text"). */
  sourceLabel?: string;
  blocks: Block[];
}

/**
 * The article with every string storable (`storableText`): a page's title or a Markdown entity such as `&#0;` may
 * hold a NUL or half a character, which the team service's database refuses and no listener needs.
 */
export function storableArticle(article: Article): Article {
  const s = storableText;
  const blocks = article.blocks.map((block): Block => {
    switch (block.kind) {
      case 'heading':
      case 'paragraph':
      case 'quote':
        return { ...block, text: s(block.text) };
      case 'list':
        return { ...block, items: block.items.map(s) };
      case 'code':
        return block.text === undefined ? block : { ...block, text: s(block.text) };
      case 'table':
        return block.cells ? { ...block, cells: block.cells.map((row) => row.map(s)) } : block;
    }
  });
  return {
    ...article,
    ...(article.title !== undefined ? { title: s(article.title) } : {}),
    ...(article.byline !== undefined ? { byline: s(article.byline) } : {}),
    ...(article.sourceLabel !== undefined ? { sourceLabel: s(article.sourceLabel) } : {}),
    blocks,
  };
}

/** Collapses runs of white space, as a reader sees text. */
export function cleanText(text: string): string {
  return text.replace(/[\s\u00a0\u200b]+/g, ' ').trim();
}

/** The words a listener hears from the article's own text (code and tables are summarized, not read). */
export function articleText(article: Article): string {
  const parts: string[] = [];
  if (article.title) parts.push(article.title);
  for (const block of article.blocks) {
    switch (block.kind) {
      case 'heading':
      case 'paragraph':
      case 'quote':
        parts.push(block.text);
        break;
      case 'list':
        parts.push(...block.items);
        break;
      default:
        break;
    }
  }
  return parts.join('\n');
}

export function countWords(text: string): number {
  return text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

/** Markdown of the article as it was read: what the user can check against the page. */
export function articleMarkdown(article: Article): string {
  const out: string[] = [];
  if (article.title) out.push(`# ${article.title}`);
  if (article.byline) out.push(`*${article.byline}*`);
  for (const block of article.blocks) {
    switch (block.kind) {
      case 'heading':
        out.push(`${'#'.repeat(Math.min(6, Math.max(2, block.level)))} ${block.text}`);
        break;
      case 'paragraph':
        out.push(block.text);
        break;
      case 'quote':
        out.push(`> ${block.text}`);
        break;
      case 'list':
        out.push(block.items.map((item, i) => (block.ordered ? `${i + 1}. ${item}` : `- ${item}`)).join('\n'));
        break;
      case 'code':
        out.push(
          `*(A code example${block.language ? ` in ${block.language}` : ''}, ${block.lineCount} line${block.lineCount === 1 ? '' : 's'}: summarized, not read aloud.)*`,
        );
        break;
      case 'table':
        out.push(`*(A table of ${block.rows} rows and ${block.columns} columns: summarized, not read aloud.)*`);
        break;
    }
  }
  return `${out.join('\n\n')}\n`;
}

/** Markdown characters that would turn text into markup (emphasis, links, HTML, headings, tables). */
const MARKUP = /[\\`*_[\]<>#|~!]/g;

function escapeMarkdown(text: string): string {
  // A line that starts like a list item ("1. ", "- ", "+ ") would become one.
  return text
    .replace(MARKUP, '\\$&')
    .replace(/^(\d+)([.)])(?=\s)/, '$1\\$2')
    .replace(/^([-+])(?=\s)/, '\\$1');
}

/**
 * The article as Markdown source that `parseMarkdown` reads back into the same blocks: how a page converted from a
 * saved file travels to the service, which takes a URL or text, so that the file and the URL are read alike.
 * The byline has no place in Markdown and is left out.
 */
export function articleSource(article: Article): string {
  const out: string[] = [];
  if (article.title) out.push(`# ${escapeMarkdown(article.title)}`);
  for (const block of article.blocks) {
    switch (block.kind) {
      case 'heading':
        out.push(`${'#'.repeat(Math.min(6, Math.max(2, block.level)))} ${escapeMarkdown(block.text)}`);
        break;
      case 'paragraph':
        out.push(escapeMarkdown(block.text));
        break;
      case 'quote':
        out.push(`> ${escapeMarkdown(block.text)}`);
        break;
      case 'list':
        out.push(
          block.items.map((item, i) => `${block.ordered ? `${i + 1}.` : '-'} ${escapeMarkdown(item)}`).join('\n'),
        );
        break;
      case 'code': {
        const lines = block.text ?? Array.from({ length: block.lineCount }, () => '').join('\n');
        const fence = '`'.repeat(Math.max(3, ...Array.from(lines.matchAll(/`{3,}/g), (m) => m[0].length + 1)));
        out.push(`${fence}${block.language ?? ''}\n${lines}\n${fence}`);
        break;
      }
      case 'table': {
        if (block.columns === 0) break;
        const cells = block.cells ?? Array.from({ length: block.rows }, () => []);
        const row = (values: string[]) =>
          `| ${Array.from({ length: block.columns }, (_, i) => escapeMarkdown(values[i] ?? '')).join(' | ')} |`;
        // An empty header row: every row of the page's table stays a row, so the table keeps its size.
        out.push([row([]), `|${' --- |'.repeat(block.columns)}`, ...cells.map(row)].join('\n'));
        break;
      }
    }
  }
  return `${out.join('\n\n')}\n`;
}
