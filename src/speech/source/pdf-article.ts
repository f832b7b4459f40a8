// A PDF's text as an Article, read with Mozilla's pdf.js (pdfjs-dist, its legacy build for Node; no canvas: text
// only; Adobe's character maps for CJK fonts). pdf.js gives positioned runs of text; this module puts them in reading order as a listener needs them:
//
//   runs ─▶ fragments (runs on one baseline, split at wide gaps such as a column gutter) ─▶ bands and columns (a
//   gutter that no fragment crosses splits a stretch of the page into columns, read left then right) ─▶ lines ─▶
//   running headers, footers and page numbers dropped (the same text at the same height on most pages; a lone number
//   at the top or bottom) ─▶ paragraphs (a wider gap, an indent, a change of size), words hyphenated at a line end
//   joined ─▶ headings (the outline's titles, else a larger size than the body) ─▶ references and captions left out,
//   each with a spoken note or a count.
//
// Used by the engine's parse worker (a PDF by URL, with the worker's time and memory limits), the command line and
// the extension (a local file: the service takes only a URL or text, so the text is extracted where the file is).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { type Article, type Block, cleanText } from './article';

/** A PDF the listener cannot be given text from: the message says why, for the user. */
export class PdfProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PdfProblem';
  }
}

export interface PdfReading {
  article: Article;
  pages: number;
  /** Lines left out as running headers, footers or page numbers. */
  runningLines: number;
  /** Figure and table captions left out. */
  captions: number;
  /** Whether a references section was left out (a note says so in the audio). */
  referencesSkipped: boolean;
}

interface Run {
  text: string;
  x: number;
  y: number;
  width: number;
  size: number;
}

interface Fragment {
  text: string;
  x0: number;
  x1: number;
  y: number;
  size: number;
}

interface Line extends Fragment {
  page: number;
  /** The column's left and right edges (its paragraphs' indents and short lines are measured against them). */
  left: number;
  right: number;
  /** Starts a stretch of the page (a new column or band): a paragraph ends before it unless the sentence goes on. */
  first: boolean;
}

// pdf.js is ES modules without top-level await: `require` loads them (the bundle inlines them; Node 20.19+ requires
// ES modules), and only when a PDF is read, so nothing else pays for its start-up.
/* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports */
type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjsLoaded: PdfJs | undefined;

/**
 * pdf.js, with its worker's code run in this thread (its "fake worker", found through globalThis.pdfjsWorker): no
 * worker script is looked for beside the bundle or fetched from anywhere. Its start-up warnings (no canvas package:
 * rendering would be broken; text is all this reads) are not the user's business.
 */
function loadPdfJs(): PdfJs {
  if (pdfjsLoaded) return pdfjsLoaded;
  const warn = console.warn;
  console.warn = () => undefined;
  // Without the optional canvas package (a packaged extension has no node_modules), pdf.js's module code still
  // makes a DOMMatrix at load time, for rendering. A stand-in is there only while it loads, so no other code of the
  // process (the extension host's other extensions) sees it; reading text never uses it.
  const global = globalThis as { DOMMatrix?: unknown; pdfjsWorker?: unknown };
  const standIn = global.DOMMatrix === undefined;
  if (standIn) global.DOMMatrix = MatrixStandIn;
  try {
    // Bundled, pdf.js is a file of its own beside this bundle (pdfjs-modules.ts); from sources (tests), the module.
    const modules = (
      __filename.endsWith('.ts') ? require('./pdfjs-modules') : require(path.join(__dirname, 'pdfjs.js'))
    ) as typeof import('./pdfjs-modules');
    global.pdfjsWorker = modules.pdfjsWorker;
    pdfjsLoaded = modules.pdfjs;
    return pdfjsLoaded;
  } finally {
    console.warn = warn;
    if (standIn) delete global.DOMMatrix;
  }
}

/** The identity matrix, all a DOMMatrix made while pdf.js loads needs to be. */
class MatrixStandIn {
  a = 1;
  b = 0;
  c = 0;
  d = 1;
  e = 0;
  f = 0;
}
/* eslint-enable @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports */

const SCAN_ADVICE =
  'Run text recognition (OCR) on it first, for example with ocrmypdf, or copy its text from a PDF viewer and convert that instead.';

/**
 * What one PDF may hold before it is refused, wherever it is read (besides the parse worker's time and memory limits):
 * 2,000 pages and 2 million characters are about twenty times what one job takes (100,000 characters; longer text is
 * converted in parts).
 */
export const PDF_LIMITS = { maxPages: 2_000, maxCharacters: 2_000_000 };

/**
 * Adobe's character maps (pdfjs-dist/cmaps, BSD-3-Clause), which pdf.js needs to turn the text of fonts with a
 * predefined CJK encoding (UniGB-UCS2-H, UniJIS-UTF16-H, …) into characters: without them a Chinese, Japanese or
 * Korean PDF reads as its Latin words only. Bundles find them copied beside themselves (esbuild.mjs: dist/pdf-cmaps);
 * from sources (tests), in node_modules.
 */
function cMapDirectory(): string | undefined {
  const beside = path.join(__dirname, 'pdf-cmaps');
  if (existsSync(beside)) return `${beside}${path.sep}`;
  try {
    return `${path.join(path.dirname(require.resolve('pdfjs-dist/package.json')), 'cmaps')}${path.sep}`;
  } catch {
    return undefined;
  }
}

/** Reads the text of a PDF; throws PdfProblem for a PDF without text, with a password or that does not parse. */
export async function extractPdfArticle(
  bytes: Uint8Array,
  label = 'The PDF',
  limits: { maxPages: number; maxCharacters: number } = PDF_LIMITS,
): Promise<PdfReading> {
  const pdfjs = loadPdfJs();
  pdfjs.GlobalWorkerOptions.workerSrc = 'about:blank';
  const cMaps = cMapDirectory();
  let doc;
  try {
    doc = await pdfjs.getDocument({
      // pdf.js takes ownership of (detaches) the buffer it is given.
      data: new Uint8Array(bytes),
      verbosity: 0,
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      stopAtErrors: false,
      ...(cMaps ? { cMapUrl: cMaps, cMapPacked: true } : {}),
    }).promise;
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'PasswordException')
      throw new PdfProblem(`${label} is protected by a password. Open it in a PDF viewer and save a copy without one.`);
    throw new PdfProblem(`${label} could not be read as a PDF (${(error as Error).message}).`);
  }
  try {
    if (doc.numPages > limits.maxPages)
      throw new PdfProblem(
        `${label} has ${doc.numPages.toLocaleString('en-US')} pages; Article Audio reads PDFs of up to ${limits.maxPages.toLocaleString('en-US')} pages. Save the pages you want to hear as a PDF of their own and convert that.`,
      );
    const pages: { runs: Run[]; width: number; height: number }[] = [];
    let collected = 0;
    for (let number = 1; number <= doc.numPages; number++) {
      const page = await doc.getPage(number);
      const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = page.view;
      const content = await page.getTextContent();
      const runs: Run[] = [];
      for (const item of content.items) {
        if (!('str' in item)) continue;
        // A glyph the font maps to no character (math symbols of a TeX font) comes out as a control character or
        // U+FFFD: nothing a listener could be read.
        const text = item.str.replace(UNMAPPED, '');
        if (text.trim() === '') continue;
        const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0] = item.transform as number[];
        // Rotated text (a margin stamp, an axis label) is not part of the reading.
        if (Math.abs(b) > 0.01 * Math.abs(a) + 0.01 || Math.abs(c) > 0.01 * Math.abs(d) + 0.01) continue;
        const size = Math.hypot(c, d) || item.height;
        if (size <= 0) continue;
        runs.push({ text, x: e - x0, y: f - y0, width: item.width, size });
        collected += text.length;
      }
      if (collected > limits.maxCharacters)
        throw new PdfProblem(
          `${label} holds more than ${limits.maxCharacters.toLocaleString('en-US')} characters of text (page ${number} of ${doc.numPages}); Article Audio reads PDFs up to that. Save the pages you want to hear as a PDF of their own and convert that.`,
        );
      pages.push({ runs, width: x1 - x0, height: y1 - y0 });
      page.cleanup();
    }
    const characters = pages.reduce((sum, p) => sum + p.runs.reduce((s, r) => s + r.text.trim().length, 0), 0);
    if (characters < (20 * Math.max(1, Math.min(doc.numPages, 5))) / 5)
      throw new PdfProblem(
        `${label} has no text layer (is it a scan?): its ${doc.numPages === 1 ? 'page is an image' : `${doc.numPages} pages are images`} with no text to read. ${SCAN_ADVICE}`,
      );
    const outline = await outlineTitles(doc);
    let title: string | undefined;
    try {
      const info = (await doc.getMetadata()).info as { Title?: unknown };
      if (typeof info?.Title === 'string' && cleanText(info.Title).length > 3) title = cleanText(info.Title);
    } catch {
      // No metadata: the title comes from the first page.
    }
    const reading = readPages(pages, outline, title);
    if (reading.article.blocks.length === 0)
      throw new PdfProblem(
        `${label} has no text to read aloud once headers and page numbers are left out. ${SCAN_ADVICE}`,
      );
    return { ...reading, pages: doc.numPages };
  } finally {
    void doc.destroy();
  }
}

async function outlineTitles(doc: { getOutline(): Promise<unknown> }): Promise<Map<string, number>> {
  const titles = new Map<string, number>();
  let outline: { title: string; items?: unknown[] }[] | null = null;
  try {
    outline = (await doc.getOutline()) as typeof outline;
  } catch {
    return titles;
  }
  const walk = (items: { title: string; items?: unknown[] }[], level: number) => {
    for (const item of items) {
      const key = headingKey(item.title);
      if (key && !titles.has(key)) titles.set(key, level);
      if (item.items?.length) walk(item.items as typeof items, level + 1);
    }
  };
  walk(outline ?? [], 2);
  return titles;
}

function headingKey(text: string): string {
  return cleanText(text)
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * Runs on one baseline joined into fragments; a gap wider than this many font sizes (a gutter) splits them. A
 * Wikipedia page printed to PDF leaves about 1 em between its text and the infobox beside it; word spaces, even
 * justified, stay under it.
 */
const GUTTER_EMS = 0.9;
/** A section number ("1.", "2.3", "IV.") is followed by a wider space (a quad): still the same line. */
const NUMBER_GAP_EMS = 2.5;

function fragmentsOf(runs: Run[]): Fragment[] {
  const sorted = [...runs].sort((a, b) => b.y - a.y || a.x - b.x);
  // Baselines: runs within a third of their size of each other (a superscript joins its line).
  const rows: Run[][] = [];
  for (const run of sorted) {
    const row = rows.at(-1);
    if (row && Math.abs((row[0] as Run).y - run.y) < 0.35 * Math.max((row[0] as Run).size, run.size)) row.push(run);
    else rows.push([run]);
  }
  const fragments: Fragment[] = [];
  for (const row of rows) {
    row.sort((a, b) => a.x - b.x);
    let current: Fragment | undefined;
    for (const run of row) {
      const gap = current ? run.x - current.x1 : 0;
      const em = current ? Math.max(current.size, run.size) : 0;
      const short = current !== undefined && /^(\d{1,2}(\.\d{1,2})*\.?|[IVX]{1,4}\.)$/.test(current.text.trim());
      if (current && (gap < GUTTER_EMS * em || (short && gap < NUMBER_GAP_EMS * em))) {
        const space = gap > 0.15 * run.size && !/\s$/.test(current.text) && !/^\s/.test(run.text) ? ' ' : '';
        current.text += space + run.text;
        current.x1 = Math.max(current.x1, run.x + run.width);
        // The line's size is its body's, not a superscript's.
        if (run.text.trim().length > 2) current.size = Math.max(current.size, run.size);
        continue;
      }
      current = { text: run.text, x0: run.x, x1: run.x + run.width, y: (row[0] as Run).y, size: run.size };
      fragments.push(current);
    }
  }
  return fragments;
}

/**
 * A page's fragments in reading order, as lines with their column's edges: the page is cut into bands at fragments
 * that span the middle (a title, an abstract, a wide figure); within a band a gutter no fragment crosses makes two
 * columns, read left then right.
 */
function linesOf(fragments: Fragment[], width: number, page: number): Line[] {
  const lines: Line[] = [];
  const gutter = findGutter(fragments, width);
  const push = (group: Fragment[], left: number, right: number) => {
    group.forEach((f, i) => lines.push({ ...f, page, left, right, first: i === 0 }));
  };
  if (gutter === undefined) {
    push(fragments, Math.min(...fragments.map((f) => f.x0)), Math.max(...fragments.map((f) => f.x1)));
    return lines;
  }
  const spans = (f: Fragment) => f.x0 < gutter - 1 && f.x1 > gutter + 1;
  let band: Fragment[] = [];
  const flush = () => {
    const left = band.filter((f) => f.x1 <= gutter + 1);
    const right = band.filter((f) => f.x1 > gutter + 1);
    if (left.length) push(left, Math.min(...left.map((f) => f.x0)), Math.max(...left.map((f) => f.x1)));
    if (right.length) push(right, Math.min(...right.map((f) => f.x0)), Math.max(...right.map((f) => f.x1)));
    band = [];
  };
  for (const fragment of fragments) {
    if (spans(fragment)) {
      flush();
      push([fragment], fragment.x0, fragment.x1);
    } else band.push(fragment);
  }
  flush();
  return lines;
}

/** The x of a gutter between two columns, when the page has one: many lines either side, few across. */
function findGutter(fragments: Fragment[], width: number): number | undefined {
  if (fragments.length < 12) return undefined;
  let best: { x: number; crossing: number } | undefined;
  for (let x = width * 0.3; x <= width * 0.7; x += 2) {
    let left = 0;
    let right = 0;
    let crossing = 0;
    for (const f of fragments) {
      if (f.x1 <= x) left++;
      else if (f.x0 >= x) right++;
      else crossing++;
    }
    if (left < 5 || right < 5 || Math.min(left, right) < 0.2 * fragments.length) continue;
    if (!best || crossing < best.crossing) best = { x, crossing };
  }
  if (!best || best.crossing > 0.15 * fragments.length) return undefined;
  return best.x;
}

/** A page number: "12", "- 12 -", "Page 3", "3 of 14", "iv". */
const PAGE_NUMBER = /^[-–—\s]*(page\s+)?(\d{1,4}|[ivxlc]{1,6})(\s*(of|\/)\s*\d{1,4})?[-–—\s]*$/i;
const REFERENCES = /^(\d+(\.\d+)*\.?\s*|[ivx]+\.\s*)?(references|bibliography|works cited|literature cited|sources)$/i;
const CAPTION = /^(figure|fig\.|table|chart|plate)\s*\d+[.:]/i;

/** The part of the page height at the top and at the bottom where running heads and footers sit. */
const MARGIN_SHARE = 0.12;

function readPages(
  pages: { runs: Run[]; width: number; height: number }[],
  outline: Map<string, number>,
  metadataTitle: string | undefined,
): Omit<PdfReading, 'pages'> {
  let lines: Line[] = [];
  const inMargin = new Set<Line>();
  pages.forEach((p, index) => {
    const pageLines = linesOf(fragmentsOf(p.runs), p.width, index + 1);
    for (const line of pageLines)
      if (line.y > p.height * (1 - MARGIN_SHARE) || line.y < p.height * MARGIN_SHARE) inMargin.add(line);
    lines.push(...pageLines);
  });

  // Running heads and footers: the same text (digits aside) at about the same height on most pages.
  const key = (line: Line) => `${Math.round(line.y / 4)}|${cleanText(line.text).replace(/\d+/g, '#').toLowerCase()}`;
  const seen = new Map<string, Set<number>>();
  for (const line of inMargin) {
    const k = key(line);
    if (!seen.has(k)) seen.set(k, new Set());
    seen.get(k)?.add(line.page);
  }
  const pageCount = pages.length;
  const running = (line: Line) => {
    if (!inMargin.has(line)) return false;
    if (PAGE_NUMBER.test(cleanText(line.text))) return true;
    const on = seen.get(key(line))?.size ?? 0;
    return pageCount >= 2 && on >= Math.max(2, Math.ceil(pageCount * 0.5));
  };
  const before = lines.length;
  lines = lines.filter((line) => !running(line));
  const runningLines = before - lines.length;

  // The body's size: the one most characters are set in.
  const bySize = new Map<number, number>();
  for (const line of lines) {
    const size = Math.round(line.size * 2) / 2;
    bySize.set(size, (bySize.get(size) ?? 0) + line.text.length);
  }
  const body = [...bySize.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 10;
  // Footnotes, figure labels and superscripts alone on a line are smaller than the body: not read.
  // So are lines without a word (a row of footnote marks, a figure's tick labels).
  lines = lines.filter((line) => line.size >= body * 0.8 && /\p{L}{2}/u.test(line.text));

  // The title: the largest text of the first page, when it stands out; else the document's own.
  let title = metadataTitle;
  const firstPage = lines.filter((l) => l.page === lines[0]?.page);
  const largest = Math.max(0, ...firstPage.map((l) => l.size));
  const titleLines = new Set<Line>();
  if (largest >= body * 1.3) {
    const top = firstPage.filter((l) => l.size >= largest * 0.95);
    const first = firstPage.indexOf(top[0] as Line);
    const run: Line[] = [];
    for (const line of firstPage.slice(first)) {
      if (line.size < largest * 0.95 || run.length >= 4) break;
      run.push(line);
    }
    if (run.length) {
      title = cleanText(run.map((l) => l.text).join(' '));
      run.forEach((l) => titleLines.add(l));
    }
  }
  lines = lines.filter((l) => !titleLines.has(l));

  // Sizes larger than the body, largest first: heading levels 2, 3, 4.
  const headingSizes = [...new Set(lines.map((l) => Math.round(l.size * 2) / 2))]
    .filter((s) => s >= body * 1.12)
    .sort((a, b) => b - a);
  const levelOfSize = (size: number) => 2 + Math.min(2, headingSizes.indexOf(Math.round(size * 2) / 2));

  const paragraphs = groupParagraphs(lines, body);
  const words = documentWords(paragraphs.map((p) => p.lines));

  const blocks: Block[] = [];
  let captions = 0;
  let referencesSkipped = false;
  let inReferences = false;
  for (const paragraph of paragraphs) {
    const text = joinLines(
      paragraph.lines.map((l) => l.text),
      words,
    );
    if (!text) continue;
    const outlineLevel = outline.get(headingKey(text));
    const bySizeHeading = paragraph.size >= body * 1.12 && text.length <= 150 && !/[.,;]$/.test(text);
    const numbered =
      paragraph.size >= body * 0.98 &&
      /^(\d+(\.\d+)*\.?|[IVX]+\.)\s+\p{Lu}/u.test(text) &&
      text.length <= 80 &&
      !/[.,;:]$/.test(text) &&
      paragraph.lines.length === 1 &&
      /\p{L}{3}/u.test(text);
    const isHeading =
      outlineLevel !== undefined || bySizeHeading || (numbered && REFERENCES.test(text)) || REFERENCES.test(text);
    if (isHeading) {
      if (REFERENCES.test(text)) {
        inReferences = true;
        referencesSkipped = true;
        blocks.push({
          kind: 'heading',
          level: outlineLevel ?? (bySizeHeading ? levelOfSize(paragraph.size) : 2),
          text,
        });
        blocks.push({ kind: 'paragraph', text: 'The references are not read.' });
        continue;
      }
      inReferences = false;
      blocks.push({ kind: 'heading', level: outlineLevel ?? (bySizeHeading ? levelOfSize(paragraph.size) : 3), text });
      continue;
    }
    if (inReferences) continue;
    if (CAPTION.test(text)) {
      captions++;
      continue;
    }
    const previous = blocks.at(-1);
    // A sentence that runs on into the next column or page, or past a figure, is one paragraph.
    if (
      previous?.kind === 'paragraph' &&
      paragraph.continues &&
      !/[.!?:"”)\]]$/.test(previous.text) &&
      /^\p{Ll}/u.test(text)
    ) {
      previous.text = joinLines([previous.text, text], words);
      continue;
    }
    blocks.push({ kind: 'paragraph', text });
  }
  // A heading with nothing after it (a section at the end of the file that was all captions) is dropped.
  while (blocks.at(-1)?.kind === 'heading') blocks.pop();
  return {
    article: { ...(title ? { title } : {}), blocks },
    runningLines,
    captions,
    referencesSkipped,
  };
}

interface Paragraph {
  lines: Line[];
  size: number;
  /** Begins a new column or page: it may be the rest of the sentence before it. */
  continues: boolean;
}

function groupParagraphs(lines: Line[], body: number): Paragraph[] {
  const paragraphs: Paragraph[] = [];
  let current: Paragraph | undefined;
  let previous: Line | undefined;
  for (const line of lines) {
    const sameStretch = previous && !line.first && previous.page === line.page;
    const gap = previous ? previous.y - line.y : 0;
    const spacing = Math.max(line.size, previous?.size ?? 0);
    const sizeChange = previous && Math.abs(previous.size - line.size) > 0.1 * body;
    const indented = line.x0 > line.left + 0.8 * line.size && line.x0 < line.left + 4 * line.size;
    const previousShort =
      previous !== undefined &&
      previous.x1 < previous.right - 0.12 * (previous.right - previous.left) &&
      /[.!?:"”)]$/.test(previous.text.trim());
    const breaks =
      !current ||
      !sameStretch ||
      sizeChange ||
      gap > 1.55 * spacing ||
      gap < 0 ||
      (indented && /[.!?:"”)]$/.test(previous?.text.trim() ?? '')) ||
      previousShort;
    if (breaks) {
      current = { lines: [line], size: line.size, continues: Boolean(previous && !sameStretch && !sizeChange) };
      paragraphs.push(current);
    } else current?.lines.push(line);
    previous = line;
  }
  return paragraphs;
}

/** Every word of the document as set on a line (not split by a line end), for telling hyphenation from hyphens. */
function documentWords(paragraphs: Line[][]): Set<string> {
  const words = new Set<string>();
  for (const lines of paragraphs)
    for (const line of lines) {
      const inner = line.text.trim().split(/\s+/).slice(0, -1);
      for (const word of inner) words.add(word.toLowerCase().replace(/^[^\p{L}]+|[^\p{L}]+$/gu, ''));
    }
  return words;
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what this matches
const UNMAPPED = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/g;

/** Characters of scripts written without spaces between words (Han, Hiragana, Katakana) and their punctuation. */
const WIDE_SCRIPT_END = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef]$/u;
const WIDE_SCRIPT_START = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef]/u;

/**
 * Lines of one paragraph as text: a word hyphenated at a line end ("impor-" + "tant") is joined; a hyphen that is
 * part of the word ("well-" + "known") stays when the document sets the word with its hyphen elsewhere and never
 * without it.
 */
function joinLines(texts: string[], words: Set<string>): string {
  let out = '';
  for (const raw of texts) {
    const text = raw.trim();
    if (!text) continue;
    if (!out) {
      out = text;
      continue;
    }
    const hyphenated = /(\p{L}+)[-\u00ad\u2010]$/u.exec(out);
    const next = /^(\p{Ll}+)/u.exec(text);
    if (hyphenated && next) {
      const joined = `${hyphenated[1]}${next[1]}`.toLowerCase();
      const kept = `${hyphenated[1]}-${next[1]}`.toLowerCase();
      const keepHyphen = !words.has(joined) && words.has(kept);
      out = keepHyphen ? `${out.slice(0, -1)}-${text}` : `${out.slice(0, -1)}${text}`;
      continue;
    }
    // Chinese and Japanese set no space between words: a line end between two of their characters is no word break.
    out += WIDE_SCRIPT_END.test(out) && WIDE_SCRIPT_START.test(text) ? text : ` ${text}`;
  }
  return cleanText(out);
}
