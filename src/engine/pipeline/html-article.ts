// A web page -> Article: Mozilla's Readability (over linkedom, six times faster than jsdom at the same quality) finds
// the article; the cleaning before and after it removes what Readability is known to keep (captions, bylines,
// "read more" blocks, comment teasers, newsletter boxes, cookie banners).
import { Readability, isProbablyReaderable } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { type Article, type Block, cleanText, countWords } from './article';

/** The part of the DOM this module uses (linkedom's nodes have it; the project does not load DOM typings). */
interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
  parentNode: DomNode | null;
}
interface DomElement extends DomNode {
  tagName: string;
  className: string;
  id: string;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  remove(): void;
}
interface DomDocument {
  title: string;
  documentElement: DomElement;
  body: DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}

const ELEMENT = 1;
const TEXT = 3;

/** Never part of an article. */
const NOISE_SELECTORS = [
  'script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'canvas', 'form', 'button', 'input',
  'select', 'textarea', 'nav', 'footer', 'aside', 'dialog', 'figcaption',
  '[role="navigation"]', '[role="contentinfo"]', '[role="complementary"]', '[role="search"]', '[role="dialog"]',
  '[role="alertdialog"]', '[hidden]', '[aria-hidden="true"]',
].join(',');

/** Class or id words of page furniture: menus, ads, sharing, comments, newsletter and cookie boxes. */
const NOISE_NAME = /(?:^|[\s_-])(cookies?|consent|gdpr|newsletter|subscribe|subscription|signup|sign-up|promo|advert|advertisement|ads?|adslot|sponsor(?:ed)?|share|sharing|social|related|recommended|recirc|more-stories|comments?|comment-list|disqus|respond|sidebar|breadcrumbs?|site-header|site-footer|masthead|popup|modal|paywall|author-bio|byline|dateline|caption|credit|tags|tag-list|toc|table-of-contents|skip-link|visually-hidden|sr-only)(?:$|[\s_-])/i;

/** Short paragraphs that are calls to action, not content. */
const BOILERPLATE = /^(?:read more|continue reading|read the full|advertisement|sponsored|sign up|subscribe|share (?:this|on)|follow us|related(?: articles| stories)?:|see also:|click here|photo(?:graph)?:|image(?: credit)?:|credit:|source:|\(?ap photo|getty images|this article (?:was|is) (?:originally )?published|comments? \(\d+\)|\d+ comments?|leave a (?:comment|reply)|posted (?:by|in|on)|tagged:?|filed under)/i;

function isElement(node: DomNode): node is DomElement {
  return node.nodeType === ELEMENT;
}

function removeNoise(document: DomDocument): void {
  for (const element of Array.from(document.querySelectorAll(NOISE_SELECTORS))) element.remove();
  for (const element of Array.from(document.querySelectorAll('[class],[id]'))) {
    // An article container whose class merely mentions "comments" (e.g. `article has-comments`) must stay.
    const tag = element.tagName.toLowerCase();
    if (tag === 'article' || tag === 'main' || tag === 'body' || tag === 'html') continue;
    const names = `${typeof element.className === 'string' ? element.className : ''} ${element.id ?? ''}`;
    if (NOISE_NAME.test(names)) element.remove();
  }
}

function textOf(node: DomNode): string {
  return cleanText(node.textContent ?? '');
}

function isBoilerplate(text: string): boolean {
  return text.length < 160 && BOILERPLATE.test(text);
}

function tableSize(table: DomElement): { rows: number; columns: number } {
  const rows = Array.from(table.querySelectorAll('tr'));
  const columns = rows.reduce((max, row) => Math.max(max, Array.from(row.querySelectorAll('td,th')).length), 0);
  return { rows: rows.length, columns };
}

function codeLanguage(pre: DomElement): string | undefined {
  const code = Array.from(pre.querySelectorAll('code'))[0];
  const classes = `${pre.className} ${code?.className ?? ''} ${pre.getAttribute('data-lang') ?? ''}`;
  const match = /(?:language|lang)-([\w+#-]+)/.exec(classes) ?? /\b(python|javascript|typescript|java|rust|go|ruby|bash|shell|json|yaml|html|css|sql|c\+\+|csharp|kotlin|swift|php)\b/i.exec(classes);
  return match?.[1];
}

/** Inline content of a block element gathered into one paragraph; block children become their own blocks. */
function collectBlocks(node: DomNode, blocks: Block[]): void {
  let inline = '';
  const flush = () => {
    const text = cleanText(inline);
    inline = '';
    if (text && /[\p{L}\p{N}]/u.test(text) && !isBoilerplate(text)) blocks.push({ kind: 'paragraph', text });
  };
  for (const child of Array.from(node.childNodes)) {
    if (child.nodeType === TEXT) {
      inline += child.textContent ?? '';
      continue;
    }
    if (!isElement(child)) continue;
    const tag = child.tagName.toLowerCase();
    if (/^h[1-6]$/.test(tag)) {
      flush();
      const text = textOf(child);
      if (text) blocks.push({ kind: 'heading', level: Number(tag[1]), text });
    } else if (tag === 'p') {
      flush();
      const text = textOf(child);
      if (text && /[\p{L}\p{N}]/u.test(text) && !isBoilerplate(text)) blocks.push({ kind: 'paragraph', text });
    } else if (tag === 'ul' || tag === 'ol') {
      flush();
      const items = Array.from(child.childNodes)
        .filter((li): li is DomElement => isElement(li) && li.tagName.toLowerCase() === 'li')
        .map(textOf)
        .filter((text) => text && !isBoilerplate(text));
      if (items.length > 0) blocks.push({ kind: 'list', ordered: tag === 'ol', items });
    } else if (tag === 'blockquote') {
      flush();
      const text = textOf(child);
      if (text) blocks.push({ kind: 'quote', text });
    } else if (tag === 'pre') {
      flush();
      const lines = (child.textContent ?? '').replace(/\n+$/, '').split('\n').length;
      blocks.push({ kind: 'code', language: codeLanguage(child), lineCount: lines });
    } else if (tag === 'table') {
      flush();
      blocks.push({ kind: 'table', ...tableSize(child) });
    } else if (tag === 'figure' || tag === 'img' || tag === 'picture' || tag === 'video' || tag === 'audio' || tag === 'hr') {
      flush();
    } else if (tag === 'br') {
      inline += ' ';
    } else if (['div', 'section', 'article', 'main', 'header', 'details', 'dl', 'center'].includes(tag)) {
      flush();
      collectBlocks(child, blocks);
    } else {
      inline += ` ${child.textContent ?? ''} `.replace(/^ | $/g, (m) => (/(?:a|span|em|strong|b|i|code|abbr|cite|q|small|sub|sup|time|mark|u|s|kbd|var)$/.test(tag) ? '' : m));
    }
  }
  flush();
}

export interface HtmlArticleResult {
  article: Article;
  /** Readability's verdict before extraction: false for link lists, home pages, search results. */
  readerable: boolean;
}

/** Extracts the article of an HTML page; returns undefined when the page holds no article. */
export function extractHtmlArticle(html: string, pageUrl?: string): HtmlArticleResult | undefined {
  const { document } = parseHTML(html) as unknown as { document: DomDocument };
  const readerable = isProbablyReaderable(document, { minContentLength: 100, minScore: 20 });
  const pageTitle = cleanText(document.title ?? '');
  const firstHeading = Array.from(document.querySelectorAll('h1')).map(textOf).find((text) => text.length > 0);
  removeNoise(document);
  const parsed = new Readability<DomNode>(document, {
    charThreshold: 300,
    keepClasses: true, // code blocks name their language in a class
    serializer: (node: unknown) => node as DomNode,
  }).parse();
  if (!parsed?.content) return undefined;
  const blocks: Block[] = [];
  collectBlocks(parsed.content, blocks);
  // "<h1 text> | Site name": the page's own heading is the better title when the page title contains it.
  let title = cleanText(parsed.title ?? '') || pageTitle || undefined;
  if (firstHeading && title && title !== firstHeading && title.toLowerCase().includes(firstHeading.toLowerCase())) title = firstHeading;
  if (!title && firstHeading) title = firstHeading;
  // Readability keeps the page's h1 inside the content when it repeats the title: read it once.
  const first = blocks[0];
  if (first?.kind === 'heading' && title && cleanText(first.text).toLowerCase() === title.toLowerCase()) blocks.shift();
  const byline = parsed.byline ? cleanText(parsed.byline) : undefined;
  // A byline paragraph at the very top ("By Jane Doe", "Jane Doe · 5 min read") is not content.
  while (blocks[0]?.kind === 'paragraph' && blocks[0].text.length < 80 && (/^by\s/i.test(blocks[0].text) || (byline && blocks[0].text.includes(byline)) || /\bmin(?:ute)? read\b/i.test(blocks[0].text))) {
    blocks.shift();
  }
  let sourceLabel: string | undefined;
  try {
    sourceLabel = pageUrl ? new URL(pageUrl).hostname.replace(/^www\./, '') : undefined;
  } catch {
    sourceLabel = undefined;
  }
  return { article: { title, byline: byline || undefined, sourceLabel, blocks }, readerable };
}

/** Words of running text (paragraphs, quotes and list items), to tell an article from a list of links. */
export function proseWords(article: Article): number {
  let words = 0;
  for (const block of article.blocks) {
    if (block.kind === 'paragraph' || block.kind === 'quote') words += countWords(block.text);
    else if (block.kind === 'list') words += block.items.reduce((sum, item) => sum + countWords(item), 0);
  }
  return words;
}
