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
const NOISE_NAME = /(?:^|[\s_-])(cookies?|consent|gdpr|newsletter|subscribe|subscription|signup|sign-up|promo|advert|advertisement|ads?|adslot|sponsor(?:ed)?|share|sharing|social|related|recommended|recirc|more-stories|comments?|comment-list|comment-form|disqus|respond|sidebar|signature|postprofile|post-meta|online-list|author-box|more-from|breadcrumbs?|site-header|site-footer|masthead|popup|modal|paywall|author-bio|byline|dateline|caption|credit|tags|tag-list|toc|table-of-contents|skip-link|visually-hidden|sr-only)(?:$|[\s_-])/i;

/** A post's meta line on forums and blogs: "by spokeshave » Sat Jan 13, 2024 6:27 pm", "Posted by Ann on 3 May 2024". */
const POST_META = /^(?:post(?:ed)?\s+)?by\s+\S[^.!?]{0,40}?\s*(?:[»·|•]|\bon\s+(?:\d|(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)).{0,40}\b(?:1[89]|20)\d\d\b/i;

/** Heading anchors that documentation generators put after every heading ("¶", "#", "§", "🔗"). */
const ANCHOR_TEXT = /^[¶#§🔗]$/u;

/** Short paragraphs that are calls to action, not content. */
const BOILERPLATE = /^(?:read more(?=\s*(?:$|[:»…→›|(-]|\s(?:at|on|about|here|of|from|stories|articles)\b))|continue reading|read the full|advertisement|sponsored|sign up|subscribe|share (?:this|on)|follow us|related(?: articles| stories)?:|see also:|click here|photo(?:graph)?:|image(?: credit)?:|credit:|source:|\(?ap photo|getty images|this article (?:was|is) (?:originally )?published|comments? \(\d+\)|\d+ comments?|leave a (?:comment|reply)|posted (?:by|in|on)|tagged:?|filed under|copyright\b|©|all rights reserved)/i;

function isElement(node: DomNode): node is DomElement {
  return node.nodeType === ELEMENT;
}

function removeNoise(document: DomDocument): void {
  for (const element of Array.from(document.querySelectorAll(NOISE_SELECTORS))) element.remove();
  for (const anchor of Array.from(document.querySelectorAll('a'))) {
    if (ANCHOR_TEXT.test(textOf(anchor))) anchor.remove();
  }
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
  return text.length < 160 && (BOILERPLATE.test(text) || POST_META.test(text));
}

function tableSize(table: DomElement): { rows: number; columns: number } {
  const rows = Array.from(table.querySelectorAll('tr'));
  const columns = rows.reduce((max, row) => Math.max(max, Array.from(row.querySelectorAll('td,th')).length), 0);
  return { rows: rows.length, columns };
}

function codeLanguage(pre: DomElement): string | undefined {
  const code = Array.from(pre.querySelectorAll('code'))[0];
  // Documentation generators name the language on a wrapper: Sphinx `highlight-python`, GitHub `highlight-source-js`.
  const wrappers: string[] = [];
  for (let node = pre.parentNode, depth = 0; node && depth < 2 && isElement(node); node = node.parentNode, depth++) {
    wrappers.push(typeof node.className === 'string' ? node.className : '');
  }
  const classes = `${pre.className} ${code?.className ?? ''} ${pre.getAttribute('data-lang') ?? ''} ${wrappers.join(' ')}`;
  const match = /(?:language|lang)-([\w+#-]+)/.exec(classes)
    ?? /\bhighlight-(?:source-)?(?!default\b|text\b|none\b)([\w+#]+)/.exec(classes)
    ?? /\b(python|javascript|typescript|java|rust|go|ruby|bash|shell|json|yaml|toml|html|css|sql|c\+\+|csharp|kotlin|swift|php)\b/i.exec(classes);
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
      // A forum reply's subject ("Re: <topic>") repeats the topic; it is not a section of its own.
      if (text && !/^re:\s/i.test(text)) blocks.push({ kind: 'heading', level: Number(tag[1]), text });
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

/** "Post by gravelgran » Sat Jan 13, 2024 4:02 pm" -> "gravelgran"; undefined when nothing like a name is left. */
function cleanByline(raw: string | null | undefined): string | undefined {
  if (!raw) return undefined;
  const name = cleanText(raw)
    .replace(/^(?:(?:post(?:ed)?|written)\s+)?by\s+/i, '')
    .split(/\s+[»|·•]\s+|\s+on\s+(?=\w+\s+\d|\d)/)[0]!
    .replace(/,\s*(?:\w+\s+)?\d{1,2}[\s,]+\w+[\s,]+\d{4}.*$/, '')
    .trim();
  return name && name.length <= 80 && /\p{L}/u.test(name) ? name : undefined;
}

/** Share of the text that is link text: high for link lists, home pages and search results. */
function linkDensity(content: DomElement): number {
  const total = textOf(content).length;
  if (total === 0) return 1;
  const linked = Array.from(content.querySelectorAll('a')).reduce((sum, a) => sum + textOf(a).length, 0);
  return linked / total;
}

/** Text in running prose: a paragraph, quote or list item of at least eight words. */
function hasProse(blocks: Block[]): boolean {
  const long = (text: string) => countWords(text) >= 8;
  return blocks.some((b) => ((b.kind === 'paragraph' || b.kind === 'quote') && long(b.text)) || (b.kind === 'list' && b.items.some(long)));
}

/** The page's own headings, without the anchors documentation generators append ("Configuring the cache¶"). */
function headingTexts(document: DomDocument, selector: string): string[] {
  return Array.from(document.querySelectorAll(selector))
    .slice(0, 8)
    .map((h) => textOf(h).replace(/\s*[¶#§🔗]$/u, ''))
    .filter((text) => text.length > 0);
}

/** Extracts the article of an HTML page; returns undefined when the page holds no article. */
export function extractHtmlArticle(html: string, pageUrl?: string): HtmlArticleResult | undefined {
  const { document } = parseHTML(html) as unknown as { document: DomDocument };
  const readerable = isProbablyReaderable(document, { minContentLength: 100, minScore: 20 });
  const pageTitle = cleanText(document.title ?? '');
  const firstHeading = headingTexts(document, 'h1')[0];
  const headings = [...headingTexts(document, 'h1'), ...headingTexts(document, 'h2')];
  // Taken before the cleaning removes byline boxes; used when Readability finds no byline of its own.
  const marked = Array.from(document.querySelectorAll('[rel="author"],[itemprop="author"],.byline,.author'))
    .map(textOf)
    .find((text) => text.length > 0 && text.length < 120);
  removeNoise(document);
  const parsed = new Readability<DomNode>(document, {
    charThreshold: 300,
    keepClasses: true, // code blocks name their language in a class
    serializer: (node: unknown) => node as DomNode,
  }).parse();
  if (!parsed?.content) return undefined;
  const blocks: Block[] = [];
  collectBlocks(parsed.content, blocks);
  // A page Readability itself doubts, whose "article" is mostly links or holds no sentence of prose, is a link list,
  // a home page or an app shell: better told apart from an article that is merely short.
  if (!readerable && (linkDensity(parsed.content as DomElement) > 0.4 || !hasProse(blocks))) return undefined;
  // "<heading> | Site name", "<topic> - <forum section>": the page's own heading is the better title when the page
  // title contains it (the longest such h1 or h2: a forum's h1 is often the site's name).
  let title = cleanText(parsed.title ?? '') || pageTitle || undefined;
  const lowerTitle = title?.toLowerCase() ?? '';
  const named = headings.filter((h) => lowerTitle.includes(h.toLowerCase()) && h.length >= lowerTitle.length * 0.3).sort((a, b) => b.length - a.length)[0];
  if (named) title = named;
  if (!title && firstHeading) title = firstHeading;
  // Readability keeps the page's h1 inside the content when it repeats the title: read it once.
  const first = blocks[0];
  if (first?.kind === 'heading' && title && cleanText(first.text).toLowerCase() === title.toLowerCase()) blocks.shift();
  const byline = cleanByline(parsed.byline) ?? cleanByline(marked);
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
