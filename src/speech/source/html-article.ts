// A web page -> Article: Mozilla's Readability (over linkedom, six times faster than jsdom at the same quality) finds
// the article; the cleaning before and after it removes what Readability is known to keep (captions, bylines,
// "read more" blocks, comment teasers, newsletter boxes, cookie banners).
import { Readability, isProbablyReaderable } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { type Article, type Block, cleanText, countWords } from './article';

/** Chinese, Japanese and Korean script: written without spaces, so a paragraph is one "word" to a space split. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;

/** Words of a text, counting two CJK characters as one word. */
function wordsIn(text: string): number {
  const cjk = text.match(CJK)?.length ?? 0;
  return cjk === 0 ? countWords(text) : countWords(text.replace(CJK, ' ')) + Math.ceil(cjk / 2);
}

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
  /** A plain walk: unlike querySelectorAll, no selector to compile on each call (linkedom compiles every time). */
  getElementsByTagName(tag: string): ArrayLike<DomElement>;
  contains(node: DomNode): boolean;
  remove(): void;
  appendChild(node: DomNode): void;
}
interface DomDocument {
  title: string;
  documentElement: DomElement;
  body: DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}

const ELEMENT = 1;
const TEXT = 3;

/** Never part of an article (when small beside it). */
const NOISE_TAGS = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'svg',
  'canvas',
  'form',
  'button',
  'input',
  'select',
  'textarea',
  'nav',
  'footer',
  'aside',
  'dialog',
  'figcaption',
]);
const NOISE_ROLES = new Set(['navigation', 'contentinfo', 'complementary', 'search', 'dialog', 'alertdialog']);

function isNoise(element: DomElement, tag: string): boolean {
  if (NOISE_TAGS.has(tag)) return true;
  const role = element.getAttribute('role');
  if (role && NOISE_ROLES.has(role)) return true;
  return element.getAttribute('hidden') !== null || element.getAttribute('aria-hidden') === 'true';
}

/** Class or id words of page furniture: menus, ads, sharing, comments, newsletter and cookie boxes. */
const NOISE_NAME =
  /(?:^|[\s_-])(cookies?|consent|gdpr|newsletter|subscribe|subscription|signup|sign-up|promo|advert|advertisement|ads?|adslot|sponsor(?:ed)?|share|sharing|social|related|recommended|recirc|more-stories|comments?|comment-list|comment-form|disqus|respond|sidebar|signature|postprofile|post-meta|online-list|author-box|more-from|breadcrumbs?|site-header|site-footer|masthead|popup|modal|paywall|author-bio|byline|dateline|caption|credit|tags|tag-list|toc|table-of-contents|skip-link|visually-hidden|sr-only)(?:$|[\s_-])/i;

/** A post's meta line on forums and blogs: "by spokeshave » Sat Jan 13, 2024 6:27 pm", "Posted by Ann on 3 May 2024". */
const POST_META =
  /^(?:post(?:ed)?\s+)?by\s+\S[^.!?]{0,40}?\s*(?:[»·|•]|\bon\s+(?:\d|(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)).{0,40}\b(?:1[89]|20)\d\d\b/i;

/** Heading anchors that documentation generators put after every heading ("¶", "#", "§", "🔗"). */
const ANCHOR_TEXT = /^[¶#§🔗]$/u;

/** Short paragraphs that are calls to action, not content. */
const BOILERPLATE =
  /^(?:read more(?=\s*(?:$|[:»…→›|(-]|\s(?:at|on|about|here|of|from|stories|articles)\b))|continue reading|read the full|advertisement|sponsored|sign up|subscribe|share (?:this|on)|follow us|related(?: articles| stories)?:|see also:|click here|photo(?:graph)?:|image(?: credit)?:|credit:|source:|\(?ap photo|getty images|this article (?:was|is) (?:originally )?published|comments? \(\d+\)|\d+ comments?|leave a (?:comment|reply)|posted (?:by|in|on)|tagged:?|filed under|copyright\b|©|all rights reserved)/i;

function isElement(node: DomNode): node is DomElement {
  return node.nodeType === ELEMENT;
}

function textOf(node: DomNode): string {
  return cleanText(node.textContent ?? '');
}

/** A date line: "PUBLISHED: 10:48, Tue, Nov 19, 2019", "| UPDATED: ...", "Updated 11:21 pm CST, Tuesday, November 19, 2019". */
const DATELINE =
  /^\|?\s*(?:published|updated|last updated|posted|modified)(?:\s+on)?\s*:?\s*(?:\d|(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)[^.!?]{0,60}\b(?:1[89]|20)\d\d\b/i;

/** A paragraph that is only a date, maybe a time and a category: "14 June 2013 at 20:51 (Overheard)", "14. Juni 2013". */
const BARE_DATE =
  /^(?:\d{1,2}\.?\s+\p{L}+\.?,?\s+|\p{L}+\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+)(?:1[89]|20)\d\d(?:,?\s*(?:at|um|-|–|,)?\s*\d{1,2}[:.]\d\d(?:\s*(?:am|pm|uhr|h))?)?(?:\s*\([^()]{1,40}\))?$/iu;

function isBoilerplate(text: string): boolean {
  if (text.length < 160 && (BOILERPLATE.test(text) || POST_META.test(text))) return true;
  if (text.length < 90 && (DATELINE.test(text) || BARE_DATE.test(text))) return true;
  // A bare address: nothing a listener can use.
  if (/^https?:\/\/\S+$/.test(text)) return true;
  return isGlued(text);
}

/**
 * A row of links with no sentence in it ("Whatsapp Facebook Pinterest", "Home › News › Politics"): at least three
 * links, their text nearly all of the row.
 */
function isLinkRow(text: string, links: number, linkedChars: number): boolean {
  if (links < 3 || text.length > 200 || /[.!?…](?:\s|$)/.test(text)) return false;
  return linkedChars >= text.replace(/\s+/g, '').length * 0.8;
}

function linkStats(element: DomElement): { links: number; chars: number } {
  const anchors = Array.from(element.getElementsByTagName('a'));
  return {
    links: anchors.length,
    chars: anchors.reduce((sum, a) => sum + (a.textContent ?? '').replace(/\s+/g, '').length, 0),
  };
}

/** Where two words meet without a space: "BankBanks", "476.98EUR", "CryptocurrenciesDeutsche". */
const GLUE = /\p{Ll}{2}\p{Lu}|\d\p{Lu}{2}|\p{Ll}\p{Lu}\p{Ll}{3}/gu;

/**
 * A ticker or a row of section names whose items were set side by side without spaces ("USD476.98EUR527.92",
 * "WeWorkCryptocurrenciesDeutsche BankBanks"): nothing a listener can follow. Real prose has a glued word now and
 * then ("iPhone", "McDonald"), never one in every two words.
 */
function isGlued(text: string): boolean {
  if (text.length > 400) return false;
  const glue = text.match(GLUE)?.length ?? 0;
  return glue >= 2 && glue >= countWords(text) * 0.5;
}

function tableBlock(table: DomElement): Block {
  const cells = Array.from(table.querySelectorAll('tr')).map((row) =>
    Array.from(row.querySelectorAll('td,th')).map(textOf),
  );
  const columns = cells.reduce((max, row) => Math.max(max, row.length), 0);
  return { kind: 'table', rows: cells.length, columns, cells };
}

function codeLanguage(pre: DomElement): string | undefined {
  const code = Array.from(pre.getElementsByTagName('code'))[0];
  // Documentation generators name the language on a wrapper: Sphinx `highlight-python`, GitHub `highlight-source-js`.
  const wrappers: string[] = [];
  for (let node = pre.parentNode, depth = 0; node && depth < 2 && isElement(node); node = node.parentNode, depth++) {
    wrappers.push(node.getAttribute('class') ?? '');
  }
  const classes = `${pre.getAttribute('class') ?? ''} ${code?.getAttribute('class') ?? ''} ${pre.getAttribute('data-lang') ?? ''} ${wrappers.join(' ')}`;
  const match =
    /(?:language|lang)-([\w+#-]+)/.exec(classes) ??
    /\bhighlight-(?:source-)?(?!default\b|text\b|none\b)([\w+#]+)/.exec(classes) ??
    /\b(python|javascript|typescript|java|rust|go|ruby|bash|shell|json|yaml|toml|html|css|sql|c\+\+|csharp|kotlin|swift|php)\b/i.exec(
      classes,
    );
  return match?.[1];
}

/** Inline content of a block element gathered into one paragraph; block children become their own blocks. */
/**
 * A photo credit in a caption ("Foto: sidm / DW", "Photo: Getty Images", "© Reuters"): read neither in a gallery's
 * captions nor anywhere else a caption is read.
 */
const CREDIT = /^(?:©|\(c\)\s|(?:fotos?|photos?|bild(?:er)?|images?|credits?|quelle|source|crédit)\s*(?::|©|\/))/iu;

/**
 * The blocks of a reading. `figures`: read what figures hold too (captions, an embedded post), without photo credits;
 * the engine's own reading leaves figures out (a caption under a photo is not the article), but for a gallery whose
 * captions are the article, the Readability floor reads them (see extractHtmlArticle).
 */
function collectBlocks(node: DomNode, blocks: Block[], figures = false): void {
  let inline = '';
  let links = 0;
  let linkedChars = 0;
  const flush = () => {
    const text = cleanText(inline);
    const row = isLinkRow(text, links, linkedChars);
    inline = '';
    links = 0;
    linkedChars = 0;
    if (!text || !/[\p{L}\p{N}]/u.test(text) || isBoilerplate(text) || row) return;
    if (figures && CREDIT.test(text)) return;
    blocks.push({ kind: 'paragraph', text });
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
      if (!text || !/[\p{L}\p{N}]/u.test(text) || isBoilerplate(text)) continue;
      if (figures && CREDIT.test(text)) continue;
      const stats = text.length <= 200 ? linkStats(child) : { links: 0, chars: 0 };
      if (!isLinkRow(text, stats.links, stats.chars)) blocks.push({ kind: 'paragraph', text });
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
      const text = (child.textContent ?? '').replace(/\n+$/, '');
      blocks.push({ kind: 'code', language: codeLanguage(child), lineCount: text.split('\n').length, text });
    } else if (tag === 'table') {
      flush();
      blocks.push(tableBlock(child));
    } else if (figures && (tag === 'figure' || tag === 'figcaption')) {
      flush();
      collectBlocks(child, blocks, true);
    } else if (
      tag === 'figure' ||
      tag === 'img' ||
      tag === 'picture' ||
      tag === 'video' ||
      tag === 'audio' ||
      tag === 'hr'
    ) {
      flush();
    } else if (tag === 'br') {
      inline += ' ';
    } else if (['div', 'section', 'article', 'main', 'header', 'details', 'dl', 'center'].includes(tag)) {
      flush();
      collectBlocks(child, blocks, figures);
    } else {
      if (tag === 'a') {
        links++;
        linkedChars += (child.textContent ?? '').replace(/\s+/g, '').length;
      } else if (inline.length < 400) {
        const stats = linkStats(child);
        links += stats.links;
        linkedChars += stats.chars;
      }
      inline += ` ${child.textContent ?? ''} `.replace(/^ | $/g, (m) =>
        /(?:a|span|em|strong|b|i|code|abbr|cite|q|small|sub|sup|time|mark|u|s|kbd|var)$/.test(tag) ? '' : m,
      );
    }
  }
  flush();
}

export interface HtmlArticleResult {
  article: Article;
  /** Readability's verdict, asked only of doubtful pages (mostly links, or no prose); true when not asked. */
  readerable: boolean;
}

/** "Post by gravelgran » Sat Jan 13, 2024 4:02 pm" -> "gravelgran"; undefined when nothing like a name is left. */
function cleanByline(raw: string | null | undefined): string | undefined {
  if (!raw) return undefined;
  const name = cleanText(raw)
    .replace(/^(?:(?:post(?:ed)?|written)\s+)?by\s+|^about\s+(?=\p{Lu})/iu, '')
    .split(/\s+[»|·•]\s+|\s+on\s+(?=\w+\s+\d|\d)/)[0]!
    .replace(/,\s*(?:\w+\s+)?\d{1,2}[\s,]+\w+[\s,]+\d{4}.*$/, '')
    .trim();
  return name && name.length <= 80 && /\p{L}/u.test(name) ? name : undefined;
}

/** Share of the text that is link text: high for link lists, home pages and search results. */
function linkDensity(content: DomElement): number {
  const total = textOf(content).length;
  if (total === 0) return 1;
  const linked = Array.from(content.getElementsByTagName('a')).reduce((sum, a) => sum + textOf(a).length, 0);
  return linked / total;
}

/** Text in running prose: a paragraph, quote or list item of at least eight words (or minWords). */
function hasProse(blocks: Block[], minWords = 8): boolean {
  const long = (text: string) => wordsIn(text) >= minWords;
  return blocks.some(
    (b) =>
      ((b.kind === 'paragraph' || b.kind === 'quote') && long(b.text)) || (b.kind === 'list' && b.items.some(long)),
  );
}

/** Readability's article container, or undefined when it finds none. Readability changes the document it reads. */
function readArticle(document: DomDocument): { content: DomElement; title?: string; byline?: string } | undefined {
  const parsed = new Readability<DomNode>(document, {
    keepClasses: true, // code blocks name their language in a class; the cleaning reads class names
    serializer: (node: unknown) => node as DomNode,
  }).parse();
  if (!parsed?.content) return undefined;
  return {
    content: parsed.content as DomElement,
    title: parsed.title ?? undefined,
    byline: parsed.byline ?? undefined,
  };
}

/** Class or id words of notices that float over a page: cookie and consent banners, their vendors, site footers. */
const FURNITURE_NAME =
  /(?:^|[\s_-])(?:cookies?|cookie-?\w*|consent|gdpr|cmp|onetrust|didomi|usercentrics|cookiebot|privacy-?(?:banner|notice)|site-?footer|footer|colophon|imprint|impressum)(?:$|[\s_-])/i;

/** A cookie or consent notice, by what it says. */
const COOKIE_TEXT = /\b(?:cookies?|consent|gdpr|datenschutz|tracking technologies)\b/i;
const COOKIE_ACTION =
  /\b(?:accept|agree|allow|consent|reject|decline|manage|settings|preferences|privacy|partners|einwilligen|akzeptieren|zustimmen)\b/i;
/** A footer's copyright line and an address block. */
const COPYRIGHT_TEXT = /(?:©|\(c\)\s*\d{4}|\bcopyright\b|\ball rights reserved\b)/i;
const ADDRESS_TEXT =
  /\b(?:tel(?:ephone)?|phone|fax|e-?mail|p\.?o\.? box|registered (?:office|in)|company (?:no|number)|vat)\b|\b\d{4,5}\s+\p{Lu}\p{Ll}+/iu;

function inFurniture(element: DomElement): boolean {
  for (let node: DomNode | null = element; node && isElement(node); node = node.parentNode) {
    const tag = node.tagName.toLowerCase();
    if (
      tag === 'footer' ||
      tag === 'dialog' ||
      node.getAttribute('role') === 'contentinfo' ||
      node.getAttribute('role') === 'dialog'
    )
      return true;
    if (FURNITURE_NAME.test(namesOf(node))) return true;
  }
  return false;
}

/** A cookie notice, a footer or an address block: short text of a kind no article is made of. */
function isFurniture(blocks: Block[]): boolean {
  const text = blocks.map((b) => ('text' in b ? b.text : b.kind === 'list' ? b.items.join(' ') : '')).join(' ');
  const words = wordsIn(text);
  if (words < 300 && COOKIE_TEXT.test(text) && COOKIE_ACTION.test(text)) return true;
  if (words < 150 && (COPYRIGHT_TEXT.test(text) || ADDRESS_TEXT.test(text)) && !hasProse(blocks, 3)) return true;
  return false;
}

/**
 * For a second reading: notices, dialogs and footers out of the page, unless they hold the page's article, and the
 * blocks of the first reading (`read`), which were furniture whatever their names.
 */
function removeFurniture(document: DomDocument, read: Block[]): void {
  const texts = new Set(read.flatMap((b) => ('text' in b ? [b.text] : b.kind === 'list' ? b.items : [])));
  if (texts.size > 0) {
    for (const element of Array.from(
      document.querySelectorAll('p,li,h1,h2,h3,h4,h5,h6,blockquote,dd,div,section,span'),
    )) {
      if (!element.parentNode) continue;
      const text = element.textContent ?? '';
      if (text.length <= 3000 && texts.has(cleanText(text))) element.remove();
    }
  }
  const candidates = Array.from(
    document.querySelectorAll(
      'footer,dialog,form,[role="dialog"],[role="alertdialog"],[aria-modal="true"],[role="contentinfo"],[class],[id]',
    ),
  );
  for (const element of candidates) {
    const tag = element.tagName.toLowerCase();
    if (tag === 'html' || tag === 'body' || tag === 'main' || tag === 'article') continue;
    const names = namesOf(element);
    const role = element.getAttribute('role');
    if (
      !FURNITURE_NAME.test(names) &&
      !COMMENT_AREA.test(names) &&
      !/^(?:footer|dialog)$/.test(tag) &&
      !(role && !/^(?:main|article)$/.test(role)) &&
      element.getAttribute('aria-modal') !== 'true' &&
      // A comment or contact form: after the notices, the biggest text left on a short post's page.
      !(tag === 'form' && element.getElementsByTagName('textarea').length > 0)
    )
      continue;
    if (holdsArticle(element)) continue;
    element.remove();
  }
}

/** Class or id words of a page's comment area and reply form. */
const COMMENT_AREA = /(?:^|[\s_-])(?:respond|comments?|comment-respond|comments-area|disqus_thread)(?:$|[\s_-])/i;

function textLength(node: DomNode): number {
  return (node.textContent ?? '').replace(/\s+/g, '').length;
}

/** Class and id: read as attributes (linkedom's className getter builds a token list and joins it on every read). */
function namesOf(element: DomElement): string {
  const className = element.getAttribute('class');
  const id = element.getAttribute('id');
  return className === null ? (id ?? '') : id === null ? className : `${className} ${id}`;
}

/** Whether an element holds a page's article, main content or first heading (a notice never does). */
function holdsArticle(element: DomElement): boolean {
  return ['article', 'main', 'h1'].some((tag) => element.getElementsByTagName(tag).length > 0);
}

const NOTICE_PARTS = new Set(['p', 'li', 'div', 'address']);

interface PageScan {
  /** Texts of elements whose class or id names furniture (share, tags, caption...): removed when small. */
  named: Set<string>;
  /** Texts of site footers, cookie and consent notices and their paragraphs: never part of an article. */
  notices: Set<string>;
  h1: string[];
  h2: string[];
  /** A byline marked as such (`rel="author"`, `itemprop="author"`, class `byline` or `author`). */
  marked?: string;
}

const MARKED_AUTHOR = /(?:^|\s)(?:byline|author)(?:\s|$)/;

/**
 * What the page says before Readability changes it, in one walk over its elements (a selector query per kind costs
 * more than the whole walk on linkedom): headings, a marked byline, and the texts of its furniture. Readability
 * rebuilds many small blocks (a signature `div` becomes a new `p`) and drops their class, so inside its result
 * furniture is known by its text.
 */
function scanPage(document: DomDocument): PageScan {
  const scan: PageScan = { named: new Set(), notices: new Set(), h1: [], h2: [] };
  const add = (into: Set<string>, element: DomElement) => {
    const text = element.textContent ?? '';
    if (text.length > 0 && text.length <= 3000) into.add(cleanText(text));
  };
  // The last notice taken whole: the elements inside it are already among its parts.
  let notice: DomElement | undefined;
  const addNotice = (element: DomElement) => {
    if (holdsArticle(element)) return;
    notice = element;
    add(scan.notices, element);
    // Readability may keep a footer's paragraphs (address, opening hours, copyright) without the footer around them.
    for (const part of Array.from(element.querySelectorAll('*')))
      if (NOTICE_PARTS.has(part.tagName.toLowerCase())) add(scan.notices, part);
  };
  const mark = (element: DomElement) => {
    const text = textOf(element);
    if (text && text.length < 120) scan.marked = text;
  };
  for (const element of Array.from(document.querySelectorAll('*'))) {
    if (notice) {
      if (notice.contains(element)) continue;
      notice = undefined;
    }
    const tag = element.tagName.toLowerCase();
    if (tag === 'h1' || tag === 'h2') {
      const list = tag === 'h1' ? scan.h1 : scan.h2;
      // Without the anchors documentation generators append ("Configuring the cache¶").
      const text = list.length < 8 ? textOf(element).replace(/\s*[¶#§🔗]$/u, '') : '';
      if (text) list.push(text);
    } else if (tag === 'footer' || tag === 'dialog') {
      addNotice(element);
      continue;
    } else if (tag === 'a' && !scan.marked && element.getAttribute('rel') === 'author') {
      mark(element);
    }
    const role = element.getAttribute('role');
    if (role === 'contentinfo' || role === 'dialog' || element.getAttribute('aria-modal') === 'true') {
      addNotice(element);
      continue;
    }
    const names = namesOf(element);
    if (names.length <= 1) continue;
    if (!scan.marked && (MARKED_AUTHOR.test(names) || element.getAttribute('itemprop') === 'author')) mark(element);
    if (tag === 'article' || tag === 'main' || tag === 'body' || tag === 'html' || tag === 'pre' || tag === 'code')
      continue;
    if (FURNITURE_NAME.test(names)) addNotice(element);
    else if (NOISE_NAME.test(names)) add(scan.named, element);
  }
  return scan;
}

/** Notices inside Readability's result, known by their text. */
function removeNotices(content: DomElement, notices: Set<string>): void {
  if (notices.size === 0) return;
  for (const element of Array.from(content.querySelectorAll('*'))) {
    if (!BLOCKISH.has(element.tagName.toLowerCase()) || !attached(element, content)) continue;
    const text = element.textContent ?? '';
    if (text.length <= 3000 && notices.has(cleanText(text))) element.remove();
  }
}

/** Block-level containers that may be furniture when their text is known furniture. */
const BLOCKISH = new Set([
  'p',
  'div',
  'section',
  'ul',
  'ol',
  'dl',
  'table',
  'header',
  'figure',
  'span',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
]);

/**
 * Page furniture inside the article Readability found: menus, share and tag rows, captions, bylines, comment and
 * newsletter boxes. An element that holds half the article or more is never furniture, whatever its class says
 * (an article's own wrapper is often called "post-share-enabled" or "entry-tags").
 */
function cleanInside(content: DomElement, furniture: Set<string>): void {
  const total = textLength(content);
  const small = (element: DomElement) => textLength(element) < total * 0.5;
  // One pass over a snapshot: an element inside one already removed is skipped (it has left the article).
  for (const element of Array.from(content.querySelectorAll('*'))) {
    if (!attached(element, content)) continue;
    const tag = element.tagName.toLowerCase();
    if (tag === 'a') {
      if (ANCHOR_TEXT.test(textOf(element))) element.remove();
      continue;
    }
    if (isNoise(element, tag)) {
      if (small(element)) element.remove();
      continue;
    }
    if (tag === 'article' || tag === 'main' || tag === 'pre' || tag === 'code') continue;
    const names = namesOf(element);
    if (names.length > 1 && NOISE_NAME.test(names) && small(element)) {
      element.remove();
      continue;
    }
    if (furniture.size > 0 && BLOCKISH.has(tag)) {
      const text = element.textContent ?? '';
      if (text.length <= 3000 && furniture.has(cleanText(text)) && small(element)) element.remove();
    }
  }
}

/** Whether an element is still inside the container (not removed with an ancestor). */
function attached(element: DomElement, container: DomElement): boolean {
  for (let node = element.parentNode; node; node = node.parentNode) if (node === container) return true;
  return false;
}

/**
 * The page as a document whose root is its `html` element. Browsers file anything before `<html>` (a PHP warning
 * printed ahead of the page, styles and meta tags a saving tool put first) into the head or the body; linkedom's
 * parser instead makes the first such element the document's root, with an empty body, and Readability finds nothing.
 * Such a page is parsed with what came before `<html>` moved into its head (where it is not read), and a bare
 * fragment inside a body of its own. Decided on the source, so that no page is parsed twice for it.
 */
function parsePage(html: string): DomDocument {
  const source = HTML_FIRST.test(html) ? html : rootedPage(html);
  return (parseHTML(source) as unknown as { document: DomDocument }).document;
}

/** A page whose first tag is `<html>`, after a byte-order mark, an XML prolog, the doctype, comments and spaces. */
const HTML_FIRST = /^(?:\s|\uFEFF|<!--[\s\S]*?-->|<!doctype[^>]*>|<\?[^>]*>)*<html(?=[\s>/])/i;

function rootedPage(html: string): string {
  // The first `<html>` start tag outside comments (old IE conditional comments hold copies of it).
  const tags = /<!--[\s\S]*?(?:-->|$)|<html(?=[\s>/])[^>]*>/gi;
  for (let match = tags.exec(html); match; match = tags.exec(html)) {
    if (match[0].startsWith('<!--')) continue;
    const before = html.slice(0, match.index).replace(/<!doctype[^>]*>/gi, '');
    const rest = html.slice(match.index + match[0].length);
    const head = /^(?:\s|<!--[\s\S]*?-->)*<head(?=[\s>])[^>]*>/i.exec(rest);
    return head
      ? `<!DOCTYPE html>${match[0]}${head[0]}${before}${rest.slice(head[0].length)}`
      : `<!DOCTYPE html>${match[0]}<head>${before}</head>${rest}`;
  }
  // No `<html>` at all: a page that starts at its `<head>`, or a fragment.
  const bare = html.replace(/^(?:\s|\uFEFF|<!doctype[^>]*>)*/i, '');
  return /^<head(?=[\s>])/i.test(bare)
    ? `<!DOCTYPE html><html>${bare}</html>`
    : `<!DOCTYPE html><html><head></head><body>${bare}</body></html>`;
}

/**
 * The blocks without paragraphs whose text comes three times or more: a gallery's slide title or "Read more" under
 * each picture is chrome, not the article.
 */
function withoutRepeats(blocks: Block[]): Block[] {
  const seen = new Map<string, number>();
  for (const block of blocks) if (block.kind === 'paragraph') seen.set(block.text, (seen.get(block.text) ?? 0) + 1);
  return blocks.filter((block) => block.kind !== 'paragraph' || (seen.get(block.text) ?? 0) < 3);
}

/** The blocks of a reading with what its figures say (collectBlocks with `figures`), repeated lines left out. */
function figuredBlocks(content: DomElement): Block[] {
  const blocks: Block[] = [];
  collectBlocks(content, blocks, true);
  return withoutRepeats(blocks);
}

/** What Readability found, and its blocks before any cleaning (page notices already out). */
interface Reading {
  content: DomElement;
  title?: string;
  byline?: string;
  blocks: Block[];
  /** Readability's own reading, before this module took anything out: the floor an extraction must not fall under. */
  plain: { blocks: Block[]; linkDensity: number };
}

function readingOf(document: DomDocument, notices: Set<string>): Reading | undefined {
  const found = readArticle(document);
  if (!found) return undefined;
  // Readability's reading as it reads it, figures included (a gallery's captions are its text), for the floor.
  const plain = figuredBlocks(found.content);
  const plainLinks = linkDensity(found.content);
  removeNotices(found.content, notices);
  const blocks: Block[] = [];
  collectBlocks(found.content, blocks);
  return { ...found, blocks, plain: { blocks: plain, linkDensity: plainLinks } };
}

/**
 * Containers that mark a page's one article body: schema.org's `articleBody`, the usual CMS wrappers, the hAtom entry,
 * a page's only `<article>`. Each counts only when the page has exactly one: a home page has many.
 */
const ARTICLE_CONTAINERS = [
  '[itemprop="articleBody"]',
  '.entry-content',
  '.post-content',
  '.article-body',
  '.story-body',
  '.hentry',
  '.h-entry',
  'article',
];

/**
 * A further reading when Readability's own choices failed: Readability over the page's marked article container
 * alone. Readability drops an `<aside>` wrapping the whole page with the article in it, and it passes over a post of a
 * few short lines for a cookie notice or a comment form with more text.
 */
function containerReading(html: string, notices: Set<string>): Reading | undefined {
  const document = parsePage(html);
  const body = document.body;
  if (!body) return undefined;
  for (const selector of ARTICLE_CONTAINERS) {
    const found = document.querySelectorAll(selector);
    if (found.length !== 1) continue;
    const container = found[0]!;
    if (container === body || container === document.documentElement) return undefined;
    for (const child of Array.from(body.childNodes)) (child as DomElement).remove();
    body.appendChild(container);
    const reading = readingOf(document, notices);
    if (!reading || isFurniture(reading.blocks) || !hasProse(reading.blocks) || linkDensity(reading.content) > 0.5)
      return undefined;
    return reading;
  }
  return undefined;
}

/**
 * An article's figures are read when the reading with them has at least this many times the prose words of the
 * reading without them (a gallery whose captions are the text); a caption under a photo of an ordinary article is not.
 */
const FIGURES_SHARE = 1.5;

/** A reading that is no article: no sentence, or a cookie notice, an address block, a footer or a dialog. */
function misread(reading: Reading | undefined): boolean {
  return !reading || !hasProse(reading.blocks, 3) || isFurniture(reading.blocks) || inFurniture(reading.content);
}

/**
 * The engine's reading keeps less than this share of the prose words of plain Readability's reading (over the
 * untouched page) when its cleaning went wrong: the page is then read as Readability reads it.
 */
const READABILITY_FLOOR = 0.5;

/**
 * Extracts the article of an HTML page; returns undefined when the page holds no article. Never reads much less than
 * plain Readability: when the cleaning takes most of an article away (a site whose every block is wrapped in an
 * element named like a cookie notice: "cmp-text"), Readability's own reading is the article.
 */
export function extractHtmlArticle(html: string, pageUrl?: string): HtmlArticleResult | undefined {
  const first: { reading?: Reading } = {};
  const result = cleanedArticle(html, pageUrl, first);
  const plain = first.reading?.plain;
  if (!plain || plain.linkDensity > 0.5 || !hasProse(plain.blocks) || isFurniture(plain.blocks)) return result;
  const plainWords = proseWordsOf(plain.blocks);
  if (result && proseWordsOf(result.article.blocks) >= plainWords * READABILITY_FLOOR) return result;
  // A page Readability reads a few words of is no article to fall back on (a link list, an app shell).
  if (plainWords < 50) return result;
  const title = result?.article.title ?? (cleanText(first.reading?.title ?? '') || undefined);
  // Readability turns some pages' headings into paragraphs; the page's own h2s are chapters again.
  const headings = new Set(
    Array.from(parsePage(html).querySelectorAll('h2,h3'), (h) => cleanText(h.textContent ?? '').toLowerCase()),
  );
  const blocks = plain.blocks.map((b): Block =>
    b.kind === 'paragraph' && headings.has(cleanText(b.text).toLowerCase())
      ? { kind: 'heading', level: 2, text: b.text }
      : b,
  );
  const top = blocks[0];
  if (top?.kind === 'heading' && title && cleanText(top.text).toLowerCase() === title.toLowerCase()) blocks.shift();
  return {
    article: {
      title,
      byline: result?.article.byline ?? cleanByline(first.reading?.byline),
      sourceLabel: sourceLabelOf(pageUrl),
      blocks,
    },
    readerable: true,
  };
}

function sourceLabelOf(pageUrl: string | undefined): string | undefined {
  try {
    return pageUrl ? new URL(pageUrl).hostname.replace(/^www\./, '') : undefined;
  } catch {
    return undefined;
  }
}

function cleanedArticle(
  html: string,
  pageUrl: string | undefined,
  untouched: { reading?: Reading },
): HtmlArticleResult | undefined {
  const document = parsePage(html);
  const pageTitle = cleanText(document.title ?? '');
  // Taken before Readability changes the page: headings for the title, a byline box it may drop, furniture texts.
  const furniture = scanPage(document);
  const firstHeading = furniture.h1[0];
  const headings = [...furniture.h1, ...furniture.h2];
  const marked = furniture.marked;

  // Readability over the untouched page: cleaning the page before it can remove the article's own wrapper (a class
  // that mentions "share", a form around the whole page) and leave a cookie notice or a footer as the biggest block.
  let reading = readingOf(document, furniture.notices);
  untouched.reading = reading;
  let further = false;
  if (misread(reading)) {
    // Readability picked a notice or a footer: read the page again without them.
    const again = parsePage(html);
    removeFurniture(again, reading?.blocks ?? []);
    reading = readingOf(again, furniture.notices);
    if (!reading || isFurniture(reading.blocks)) {
      reading = containerReading(html, furniture.notices);
      if (!reading) return undefined;
      further = true;
    }
  }
  if (!reading) return undefined;
  let readerable = true;
  let blocks: Block[] = [];
  for (;;) {
    const untouched = reading.blocks;
    // Taken before the cleaning, which drops captions by their class names ("caption", "credit").
    const figuredBefore = figuredBlocks(reading.content);
    cleanInside(reading.content, furniture.named);
    blocks = [];
    collectBlocks(reading.content, blocks);
    // The cleaning is for precision; when it costs much of the text, the untouched reading is the better one.
    if (proseWordsOf(blocks) < proseWordsOf(untouched) * 0.6) blocks = untouched;
    // A gallery, or a how-to told in photos: when what the figures say (their captions, an embedded post) is a good
    // part of the article, it is read too, photo credits and repeated slide titles left out.
    const enough = proseWordsOf(blocks) * FIGURES_SHARE;
    const figured = [figuredBlocks(reading.content), figuredBefore].find((read) => proseWordsOf(read) >= enough);
    if (figured) blocks = figured;
    // A page Readability itself doubts, whose "article" is mostly links or holds no sentence of prose, is a link
    // list, a home page or an app shell: better told apart from an article that is merely short. Readability's own
    // verdict needs the untouched page: asked (on a fresh parse) only of pages that look doubtful.
    if (further || (linkDensity(reading.content) <= 0.5 && hasProse(blocks))) break;
    readerable = isProbablyReaderable(parsePage(html), { minContentLength: 100, minScore: 20 });
    if (readerable) break;
    // Unless the page marks one article body that holds prose: a post of a few short lines.
    const container = containerReading(html, furniture.notices);
    if (!container) return undefined;
    reading = container;
    further = true;
  }
  const found = reading;
  // "<heading> | Site name", "<topic> - <forum section>": the page's own heading is the better title when the page
  // title contains it (the longest such h1 or h2: a forum's h1 is often the site's name).
  let title = cleanText(found.title ?? '') || pageTitle || undefined;
  const lowerTitle = title?.toLowerCase() ?? '';
  const named = headings
    .filter((h) => lowerTitle.includes(h.toLowerCase()) && h.length >= lowerTitle.length * 0.3)
    .sort((a, b) => b.length - a.length)[0];
  if (named) title = named;
  if (!title && firstHeading) title = firstHeading;
  // Readability keeps the page's h1 inside the content when it repeats the title: read it once.
  const first = blocks[0];
  if (first?.kind === 'heading' && title && cleanText(first.text).toLowerCase() === title.toLowerCase()) blocks.shift();
  const byline = cleanByline(found.byline) ?? cleanByline(marked);
  // A byline paragraph at the very top ("By Jane Doe", "Jane Doe · 5 min read") is not content.
  while (
    blocks[0]?.kind === 'paragraph' &&
    blocks[0].text.length < 80 &&
    (/^by\s/i.test(blocks[0].text) ||
      (byline && blocks[0].text.includes(byline)) ||
      /\bmin(?:ute)? read\b/i.test(blocks[0].text))
  ) {
    blocks.shift();
  }
  // A site's address or copyright line at the very end, kept by Readability with the last paragraphs.
  for (let tail = 0; tail < 3; tail++) {
    const last = blocks.at(-1);
    if (
      last?.kind !== 'paragraph' ||
      wordsIn(last.text) > 60 ||
      !(COPYRIGHT_TEXT.test(last.text) || /\b(?:tel|phone|fax)\b/i.test(last.text))
    )
      break;
    blocks.pop();
  }
  return { article: { title, byline: byline || undefined, sourceLabel: sourceLabelOf(pageUrl), blocks }, readerable };
}

function proseWordsOf(blocks: Block[]): number {
  let words = 0;
  for (const block of blocks) {
    if (block.kind === 'paragraph' || block.kind === 'quote') words += wordsIn(block.text);
    else if (block.kind === 'list') words += block.items.reduce((sum, item) => sum + wordsIn(item), 0);
  }
  return words;
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
