// What `article-audio convert` sends: a web address as `url`, anything else as `text`. The service takes only a
// URL or text, so a local HTML file is read here by the engine's own extractor (html-article.ts, the code that reads
// pages the engine fetches) and sent as Markdown that the engine reads back into the same article; a local PDF
// likewise by the engine's PDF reader (pdf-article.ts).
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { TEXT_MAX_LENGTH, TEXT_MIN_LENGTH, binaryProblem, countCharacters, isPdf, textProblem } from '../protocol';
import { articleSource } from '../speech/source/article';
import { extractHtmlArticle } from '../speech/source/html-article';
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

export async function readArticleInput(
  source: string,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<ArticleInput> {
  if (/^https?:\/\//i.test(source)) {
    let parsed: URL;
    try {
      parsed = new URL(source);
    } catch {
      throw new UsageError(`"${source}" is not a valid web address.`);
    }
    return { url: parsed.href, suggestedName: nameFromUrl(parsed), label: parsed.href };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source))
    throw new UsageError(`Only http:// and https:// addresses can be converted, not "${source}".`);

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
      throw new UsageError(
        error.code === 'ENOENT' ? `No such file: ${source}` : `Cannot read ${source}: ${error.message}`,
      );
    });
    if (!info.isFile()) throw new UsageError(`${source} is not a file.`);
    if (info.size > MAX_INPUT_BYTES)
      throw new UsageError(`${source} is larger than ${MAX_INPUT_BYTES / 1024 / 1024} MiB.`);
    const bytes = await readFile(source);
    if (isPdf(bytes)) {
      content = await pdfToText(bytes, source);
      return checkedInput(content, source, path.basename(source, path.extname(source)) || 'article');
    }
    // An image, an archive or a program read aloud is minutes of letter names: refused before any work.
    const binary = binaryProblem(bytes);
    if (binary) throw new UsageError(`${source} ${binary}. Convert a Markdown, text or HTML file, or a web page.`);
    content = decodeFile(bytes);
    label = source;
    suggestedName = path.basename(source, path.extname(source)) || 'article';
    isHtml = /\.x?html?$/i.test(source) || looksLikeHtml(content);
  }
  return checkedInput((isHtml ? htmlToText(content, label) : content).trim(), label, suggestedName);
}

function checkedInput(text: string, label: string, suggestedName: string): ArticleInput {
  const length = countCharacters(text);
  if (length < TEXT_MIN_LENGTH) {
    throw new UsageError(`${label} has ${length} characters of text; an article needs at least ${TEXT_MIN_LENGTH}.`);
  }
  if (length > TEXT_MAX_LENGTH) {
    throw new UsageError(
      `${label} has ${length} characters of text; the service takes at most ${TEXT_MAX_LENGTH}. Split it into parts.`,
    );
  }
  const problem = textProblem(text);
  if (problem) throw new UsageError(`The text of ${label} ${problem}.`);
  return { text, suggestedName, label };
}

/** A PDF's text as Markdown (its headings kept), read as the engine reads one (speech/parse/pdf-text.ts). */
export async function pdfToText(bytes: Uint8Array, label: string): Promise<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports
  const { readPdfText } = require('../speech/parse/pdf-text') as typeof import('../speech/parse/pdf-text');
  const read = await readPdfText(bytes, label, new AbortController().signal);
  if ('problem' in read) throw new UsageError(read.problem);
  return read.text;
}

/** A file's text: UTF-16 when its byte order mark says so (Windows "Unicode" files), else UTF-8. */
function decodeFile(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  return new TextDecoder('utf-8').decode(bytes);
}

function looksLikeHtml(content: string): boolean {
  return /^\s*(<!doctype html|<html[\s>])/i.test(content);
}

/**
 * The article of an HTML page as Markdown: the engine's own extractor (the one it runs on pages it fetches), written
 * as Markdown that the engine reads back into the same blocks, so a saved page and its URL are read alike.
 */
export function htmlToText(html: string, label = 'The page'): string {
  const extracted = extractHtmlArticle(html);
  if (!extracted || extracted.article.blocks.length === 0) {
    throw new UsageError(
      `${label} has no readable article (it looks like a list of links or an app). Open the article itself, or paste its text instead.`,
    );
  }
  return articleSource(extracted.article);
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
    if (size > MAX_INPUT_BYTES)
      throw new UsageError(`Standard input is larger than ${MAX_INPUT_BYTES / 1024 / 1024} MiB.`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
