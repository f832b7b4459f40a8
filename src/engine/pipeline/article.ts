// The article as the pipeline understands it, whatever it came from (a web page, Markdown or plain text).

export type Block =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'list'; ordered: boolean; items: string[] }
  | { kind: 'quote'; text: string }
  | { kind: 'code'; language?: string; lineCount: number }
  | { kind: 'table'; rows: number; columns: number };

export interface Article {
  title?: string;
  byline?: string;
  /** Where the article came from, for the greeting and logs (a host name or "your text"). */
  sourceLabel?: string;
  blocks: Block[];
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
        out.push(`*(A code example${block.language ? ` in ${block.language}` : ''}, ${block.lineCount} line${block.lineCount === 1 ? '' : 's'}: summarized, not read aloud.)*`);
        break;
      case 'table':
        out.push(`*(A table of ${block.rows} rows and ${block.columns} columns: summarized, not read aloud.)*`);
        break;
    }
  }
  return `${out.join('\n\n')}\n`;
}
