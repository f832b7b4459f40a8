// What `article-audio convert` sends: a web address as `url`, anything else as `text`. The service takes only a
// URL or text, so a local HTML file is read here: Readability finds the article (as the engine does for pages it
// fetches) and it is sent as Markdown-style text, keeping the title and headings that the voices pause at.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readability } from '@mozilla/readability';
import { TEXT_MAX_LENGTH, TEXT_MIN_LENGTH, countCharacters } from '../api/index';
import { UsageError } from '../engine/settings';

export interface ArticleInput {
  url?: string;
  text?: string;
  /** A file name stem for the outputs when --out is not given. */
  suggestedName: string;
  /** How to name the input in messages. */
  label: string;
}

/** Largest input file or stdin read (the service takes at most 100000 characters; HTML carries markup on top). */
const MAX_INPUT_BYTES = 20 * 1024 * 1024;

export async function readArticleInput(source: string, stdin: NodeJS.ReadableStream = process.stdin): Promise<ArticleInput> {
  if (/^https?:\/\//i.test(source)) {
    let parsed: URL;
    try {
      parsed = new URL(source);
    } catch {
      throw new UsageError(`"${source}" is not a valid web address.`);
    }
    return { url: parsed.href, suggestedName: nameFromUrl(parsed), label: parsed.href };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) throw new UsageError(`Only http:// and https:// addresses can be converted, not "${source}".`);

  let content: string;
  let label: string;
  let suggestedName: string;
  let isHtml: boolean;
  if (source === '-') {
    content = await readAll(stdin);
    label = 'standard input';
    suggestedName = 'article';
    isHtml = looksLikeHtml(content);
  } else {
    const info = await stat(source).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(error.code === 'ENOENT' ? `No such file: ${source}` : `Cannot read ${source}: ${error.message}`);
    });
    if (!info.isFile()) throw new UsageError(`${source} is not a file.`);
    if (info.size > MAX_INPUT_BYTES) throw new UsageError(`${source} is larger than ${MAX_INPUT_BYTES / 1024 / 1024} MiB.`);
    content = await readFile(source, 'utf8');
    label = source;
    suggestedName = path.basename(source, path.extname(source)) || 'article';
    isHtml = /\.x?html?$/i.test(source) || looksLikeHtml(content);
  }
  const text = (isHtml ? await htmlToText(content) : content).trim();
  const length = countCharacters(text);
  if (length < TEXT_MIN_LENGTH) {
    throw new UsageError(`${label} has ${length} characters of text; an article needs at least ${TEXT_MIN_LENGTH}.`);
  }
  if (length > TEXT_MAX_LENGTH) {
    throw new UsageError(`${label} has ${length} characters of text; the service takes at most ${TEXT_MAX_LENGTH}. Split it into parts.`);
  }
  return { text, suggestedName, label };
}

function looksLikeHtml(content: string): boolean {
  return /^\s*(<!doctype html|<html[\s>])/i.test(content);
}

/** The little of the DOM this file walks (the project builds without the DOM library's types). */
interface HtmlElement {
  tagName: string;
  textContent: string | null;
  children: ArrayLike<HtmlElement>;
}

type ParseHtml = (html: string) => { document: { body: HtmlElement | null; querySelector(selector: string): HtmlElement | null } };

/** The article in an HTML page as Markdown-style text: `# Title`, `## Heading`, paragraphs and list items. */
export async function htmlToText(html: string): Promise<string> {
  // linkedom ships as an ES module only.
  const parseHTML = (await import('linkedom')).parseHTML as unknown as ParseHtml;
  const { document } = parseHTML(html);
  // Read before Readability, which changes the document it is given.
  const heading = document.querySelector('h1')?.textContent?.replace(/\s+/g, ' ').trim();
  const article = new Readability(document).parse();
  const root = article?.content ? parseHTML(`<!doctype html><html><body>${article.content}</body></html>`).document.body : document.body;
  const blocks: string[] = [];
  // Page titles often carry the site's name ("Title | Site"); the page's own heading is the article's title then.
  const pageTitle = article?.title?.trim();
  const title = heading && (!pageTitle || pageTitle.includes(heading)) ? heading : pageTitle;
  if (title) blocks.push(`# ${title}`);
  const walk = (element: HtmlElement) => {
    for (const child of Array.from(element.children)) {
      const tag = child.tagName.toLowerCase();
      if (['script', 'style', 'noscript', 'template', 'nav', 'footer', 'aside', 'figure'].includes(tag)) continue;
      const heading = /^h([1-6])$/.exec(tag);
      const text = (child.textContent ?? '').replace(/\s+/g, ' ').trim();
      if (heading) {
        if (text && text !== title) blocks.push(`${'#'.repeat(Math.max(2, Number(heading[1])))} ${text}`);
      } else if (['p', 'li', 'blockquote', 'pre', 'dd', 'dt', 'td', 'th', 'figcaption'].includes(tag)) {
        if (text) blocks.push(tag === 'li' ? `- ${text}` : text);
      } else {
        const before = blocks.length;
        walk(child);
        // A container with bare text and no block children (a <div> used as a paragraph).
        if (blocks.length === before && text) blocks.push(text);
      }
    }
  };
  if (root) walk(root);
  return blocks.join('\n\n');
}

function nameFromUrl(url: URL): string {
  const segments = url.pathname.split('/').filter(Boolean);
  const last = decodeURIComponentSafe(segments.at(-1) ?? '').replace(/\.[a-z0-9]{1,5}$/i, '');
  return slug(last) || slug(url.hostname) || 'article';
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function slug(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[^\w.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 80);
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > MAX_INPUT_BYTES) throw new UsageError(`Standard input is larger than ${MAX_INPUT_BYTES / 1024 / 1024} MiB.`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
