// Markdown or plain text -> Article. Plain text is Markdown without markup, so one parser serves both.
import { Lexer, type Token, type Tokens } from 'marked';
import { type Article, type Block, cleanText } from './article';
import { shortenLongRuns } from '../text/normalize/long-tokens';

/** The readable text of inline tokens: links by their text, images by nothing, code spans by their content. */
function inlineText(tokens: Token[] | undefined, fallback: string): string {
  if (!tokens) return cleanText(fallback);
  const parts: string[] = [];
  for (const token of tokens) {
    switch (token.type) {
      case 'image':
      case 'html':
        break;
      case 'br':
        parts.push(' ');
        break;
      case 'codespan':
        parts.push((token as Tokens.Codespan).text);
        break;
      case 'escape':
        parts.push((token as Tokens.Escape).text);
        break;
      case 'text': {
        const text = token as Tokens.Text;
        parts.push(text.tokens ? inlineText(text.tokens, text.text) : decodeEntities(text.text));
        break;
      }
      default: {
        const withChildren = token as Token & { tokens?: Token[]; text?: string };
        parts.push(
          withChildren.tokens
            ? inlineText(withChildren.tokens, withChildren.text ?? '')
            : decodeEntities(withChildren.text ?? ''),
        );
      }
    }
  }
  return cleanText(parts.join(''));
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };
function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name: string) => ENTITIES[name] ?? '');
}

function listItems(list: Tokens.List): string[] {
  return list.items
    .map((item) => {
      const nested: string[] = [];
      for (const child of item.tokens) {
        if (child.type === 'list') nested.push(...listItems(child as Tokens.List));
        else if (child.type === 'text' || child.type === 'paragraph') {
          const c = child as Tokens.Text | Tokens.Paragraph;
          nested.unshift(inlineText(c.tokens, c.text));
        }
      }
      return nested.filter(Boolean).join('; ');
    })
    .filter((text) => text.length > 0);
}

function blocksOf(tokens: Token[], blocks: Block[]): void {
  for (const token of tokens) {
    switch (token.type) {
      case 'heading': {
        const heading = token as Tokens.Heading;
        const text = inlineText(heading.tokens, heading.text);
        if (text) blocks.push({ kind: 'heading', level: heading.depth, text });
        break;
      }
      case 'paragraph': {
        const paragraph = token as Tokens.Paragraph;
        const text = inlineText(paragraph.tokens, paragraph.text);
        if (text) blocks.push({ kind: 'paragraph', text });
        break;
      }
      case 'text': {
        const text = inlineText((token as Tokens.Text).tokens, (token as Tokens.Text).text);
        if (text) blocks.push({ kind: 'paragraph', text });
        break;
      }
      case 'list': {
        const items = listItems(token as Tokens.List);
        if (items.length > 0) blocks.push({ kind: 'list', ordered: (token as Tokens.List).ordered, items });
        break;
      }
      case 'blockquote': {
        const inner: Block[] = [];
        blocksOf((token as Tokens.Blockquote).tokens, inner);
        const text = cleanText(
          inner.map((b) => ('text' in b ? b.text : 'items' in b ? b.items.join('. ') : '')).join(' '),
        );
        if (text) blocks.push({ kind: 'quote', text });
        break;
      }
      case 'code': {
        const code = token as Tokens.Code;
        const language = code.lang?.trim().split(/\s+/)[0] || undefined;
        blocks.push({ kind: 'code', language, lineCount: code.text.split('\n').length });
        break;
      }
      case 'table': {
        const table = token as Tokens.Table;
        const cells = [table.header, ...table.rows].map((row) => row.map((cell) => inlineText(cell.tokens, cell.text)));
        blocks.push({ kind: 'table', rows: table.rows.length, columns: table.header.length, cells });
        break;
      }
      default:
        break; // space, hr, html, def: nothing to read
    }
  }
}

/** Parses Markdown (or plain text) into an Article. The first level-1 heading, if it opens the text, is the title. */
export function parseMarkdown(source: string): Article {
  // Long runs without a space are cut to their ends first: the lexer is quadratic on some of them (long-tokens.ts).
  const tokens = new Lexer({ gfm: true }).lex(shortenLongRuns(source.replace(/\r\n?/g, '\n')));
  const blocks: Block[] = [];
  blocksOf(tokens, blocks);
  const first = blocks[0];
  if (first?.kind === 'heading' && first.level === 1) {
    blocks.shift();
    return { title: first.text, blocks };
  }
  return { blocks };
}
