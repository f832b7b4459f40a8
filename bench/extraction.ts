// Article extraction on a development set of real pages (built by bench/devset.ts, kept outside the repository):
// the engine's extractor and plain @mozilla/readability over an untouched linkedom parse, side by side on the same
// pages in the same run.
//
//   npm run bench -- extraction --pages /work/devset [--sources sh,moz,tf] [--details out.jsonl]
//                               [--min-kb 100 --max-kb 200]
//
// Always, without the development set: the Readability floor over the repository's page fixtures (pages where the
// engine keeps under half of Readability's words), and PDF rows (the test layouts of test/support/pdf-layouts.ts and
// the real PDFs of test/fixtures/pdf: sentences read in order, furniture leaked, time per PDF).
//
// Pages with an expected text are scored by word 4-gram shingles (mean precision and recall over pages, F1 of the
// two means, as scrapinghub/article-extraction-benchmark does); pages with snippets by the share of must-contain
// snippets read and must-not-contain snippets leaked. Only the article's body is compared: titles are not part of
// any source's expected text. Code and tables count as found: the engine keeps their text and summarizes it aloud.
//
// Time is taken per page two ways: wall time, and the process's CPU time (user + system), which on a machine shared
// with other work is the closer figure to what a quiet machine shows (it leaves out the time spent waiting for a
// core; it includes V8's helper threads, so it errs high). The timing rows are over "typical" pages, 100 to 200 KB
// (or the --min-kb/--max-kb window).
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { type Article, articleText, countWords } from '../src/speech/source/article';
import { extractHtmlArticle } from '../src/speech/source/html-article';
import { extractPdfArticle } from '../src/speech/source/pdf-article';
import { type LaidOut, slideDeck, twoColumnPaper } from '../test/support/pdf-layouts';
import type { DevPage } from './devset';
import { type Overlap, nodeText, normalizeSnippet, shingleOverlap } from './lib/page-text';
import { type Bench, type Row, atLeast, below, percentile } from './lib/report';

const TARGET_F1 = 0.96;
const TARGET_MS = 100;
/** Readability's reading of a page counts as prose (an article to compare with) from this many words. */
const PROSE_WORDS = 150;

interface Extracted {
  /** Undefined when the extractor found no article. */
  text?: string;
  ms: number;
  cpuMs: number;
}

/** Wall and CPU time of one call, in milliseconds. */
function timed<T>(run: () => T): { value: T; ms: number; cpuMs: number } {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = run();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { value, ms, cpuMs: (used.user + used.system) / 1000 };
}

type Extractor = (html: string, url: string) => Extracted;

function engine(html: string, url: string): Extracted {
  const { value: result, ms, cpuMs } = timed(() => extractHtmlArticle(html, url));
  return { text: result ? bodyText(result.article) : undefined, ms, cpuMs };
}

/** The article's body as the engine found it: code and tables count, since they were found (and summarized aloud). */
function bodyText(article: Article): string {
  const parts: string[] = [];
  for (const block of article.blocks) {
    if (block.kind === 'code') parts.push(block.text ?? '');
    else if (block.kind === 'table') parts.push(...(block.cells ?? []).map((row) => row.join(' ')));
    else parts.push(articleText({ blocks: [block] }));
  }
  return parts.join('\n');
}

function readability(html: string, _url: string): Extracted {
  const {
    value: parsed,
    ms,
    cpuMs,
  } = timed(() => {
    const { document } = parseHTML(html) as unknown as { document: never };
    return new Readability(document, { serializer: (node: unknown) => node }).parse();
  });
  return { text: parsed?.content ? nodeText(parsed.content) : undefined, ms, cpuMs };
}

interface PageResult {
  name: string;
  bytes: number;
  article: boolean;
  overlap?: Overlap;
  included?: number;
  includeTotal?: number;
  leaked?: number;
  excludeTotal?: number;
  rejected: boolean;
  /** Words of the text read (0 when rejected). */
  words: number;
  ms: number;
  cpuMs: number;
}

function score(name: string, html: string, page: DevPage, out: Extracted): PageResult {
  const text = out.text ?? '';
  const result: PageResult = {
    name,
    bytes: Buffer.byteLength(html),
    article: page.article !== false,
    rejected: out.text === undefined,
    words: countWords(text),
    ms: out.ms,
    cpuMs: out.cpuMs,
  };
  // A page its source marks as no article (Readability's own small test cases) is scored only on being rejected.
  if (page.expected !== undefined && result.article) result.overlap = shingleOverlap(page.expected, text);
  const read = normalizeSnippet(text);
  if (page.include?.length) {
    result.included = page.include.filter((s) => read.includes(normalizeSnippet(s))).length;
    result.includeTotal = page.include.length;
  }
  if (page.exclude?.length) {
    result.leaked = page.exclude.filter((s) => read.includes(normalizeSnippet(s))).length;
    result.excludeTotal = page.exclude.length;
  }
  return result;
}

interface Summary {
  pages: number;
  scored: number;
  precision: number;
  recall: number;
  f1: number;
  meanPageF1: number;
  underHalf: number;
  rejected: number;
  nonArticles: number;
  nonArticlesRejected: number;
  snippetPages: number;
  includeRate: number;
  leakRate: number;
  medianMs: number;
  worstMs: number;
  typical: number;
  typicalMedianMs: number;
  typicalWorstMs: number;
  typicalMedianCpuMs: number;
  typicalWorstCpuMs: number;
}

/** "A typical 150 KB page": the pages from 100 to 200 KB, or the window asked for. */
interface SizeWindow {
  minKb: number;
  maxKb: number;
}

const mean = (values: number[]) =>
  values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
const pageF1 = (o: Overlap) =>
  o.precision + o.recall === 0 ? 0 : (2 * o.precision * o.recall) / (o.precision + o.recall);

function summarize(results: PageResult[], window: SizeWindow): Summary {
  const scored = results.filter((r) => r.overlap);
  const precision = mean(scored.filter((r) => r.overlap!.tp + r.overlap!.fp > 0).map((r) => r.overlap!.precision));
  const recall = mean(scored.filter((r) => r.overlap!.tp + r.overlap!.fn > 0).map((r) => r.overlap!.recall));
  const snippets = results.filter((r) => r.includeTotal !== undefined || r.excludeTotal !== undefined);
  const sum = (pick: (r: PageResult) => number | undefined) => snippets.reduce((total, r) => total + (pick(r) ?? 0), 0);
  const times = results.map((r) => r.ms);
  const inWindow = results.filter((r) => r.bytes >= window.minKb * 1000 && r.bytes <= window.maxKb * 1000);
  const typical = inWindow.map((r) => r.ms);
  const typicalCpu = inWindow.map((r) => r.cpuMs);
  return {
    pages: results.length,
    scored: scored.length,
    precision,
    recall,
    f1: (2 * precision * recall) / (precision + recall),
    meanPageF1: mean(scored.map((r) => pageF1(r.overlap!))),
    underHalf: scored.filter((r) => r.article && r.overlap!.recall < 0.5).length,
    rejected: results.filter((r) => r.article && r.rejected).length,
    nonArticles: results.filter((r) => !r.article).length,
    nonArticlesRejected: results.filter((r) => !r.article && r.rejected).length,
    snippetPages: snippets.length,
    includeRate: sum((r) => r.included) / sum((r) => r.includeTotal),
    leakRate: sum((r) => r.leaked) / sum((r) => r.excludeTotal),
    medianMs: percentile(times, 50),
    worstMs: Math.max(...times),
    typical: typical.length,
    typicalMedianMs: percentile(typical, 50),
    typicalWorstMs: typical.length > 0 ? Math.max(...typical) : Number.NaN,
    typicalMedianCpuMs: percentile(typicalCpu, 50),
    typicalWorstCpuMs: typicalCpu.length > 0 ? Math.max(...typicalCpu) : Number.NaN,
  };
}

function loadPages(
  dir: string,
  sources: string[] | undefined,
  size?: Partial<SizeWindow>,
): { name: string; html: string; page: DevPage }[] {
  const fits = (file: string) => {
    if (size?.minKb === undefined && size?.maxKb === undefined) return true;
    const bytes = statSync(path.join(dir, `${file.slice(0, -'.json'.length)}.html`)).size;
    return bytes >= (size.minKb ?? 0) * 1000 && bytes <= (size.maxKb ?? Infinity) * 1000;
  };
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .filter((file) => !sources || sources.some((s) => file.startsWith(`${s}-`)))
    .filter(fits)
    .sort()
    .map((file) => {
      const name = file.slice(0, -'.json'.length);
      return {
        name,
        html: readFileSync(path.join(dir, `${name}.html`), 'utf8'),
        page: JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as DevPage,
      };
    });
}

const f3 = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(3));
const pct = (value: number) => (Number.isNaN(value) ? '-' : `${(value * 100).toFixed(1)} %`);
const ms = (value: number) => (Number.isNaN(value) ? '-' : `${value.toFixed(1)} ms`);

export interface ExtractionReport {
  engine: Summary;
  readability: Summary;
  /** Pages where the engine reads under half the article while Readability reads over 90 %. */
  engineLosses: string[];
  /** Pages the engine rejects that Readability reads (article pages only). */
  engineOnlyRejected: string[];
  /**
   * Issue 27's floor, on every page whether or not it has an expected text: pages where the engine keeps under half of
   * the words plain Readability reads, when Readability's reading is prose (at least PROSE_WORDS words).
   */
  underHalfOfReadability: string[];
  /** Pages where Readability's reading is prose: the floor's denominator. */
  readabilityProse: number;
  window: SizeWindow;
}

export function compareExtractors(
  dir: string,
  sources?: string[],
  details?: string,
  progress?: (message: string) => void,
  size?: Partial<SizeWindow>,
): ExtractionReport {
  const pages = loadPages(dir, sources, size);
  const window: SizeWindow = { minKb: size?.minKb ?? 100, maxKb: size?.maxKb ?? 200 };
  if (pages.length === 0) throw new Error(`no pages in ${dir} (build them with bench/devset.ts)`);
  // One warm-up page each, so neither side pays for the JIT on the first page.
  for (const { html, page } of pages.slice(0, 3)) {
    engine(html, page.url ?? 'https://example.org/');
    readability(html, page.url ?? 'https://example.org/');
  }
  const ours: PageResult[] = [];
  const theirs: PageResult[] = [];
  const lines: string[] = [];
  pages.forEach(({ name, html, page }, index) => {
    if (index % 100 === 0) progress?.(`extraction: page ${index + 1} of ${pages.length}`);
    const url = page.url ?? `https://example.org/${name}`;
    // Alternate who goes first, so a burst of load from elsewhere does not always hit the same side.
    const runs: [Extractor, PageResult[]][] = [
      [engine, ours],
      [readability, theirs],
    ];
    if (index % 2 === 1) runs.reverse();
    const outs = runs.map(([extract, into]) => {
      const out = extract(html, url);
      into.push(score(name, html, page, out));
      return out;
    });
    if (details)
      lines.push(
        JSON.stringify({
          ours: ours.at(-1),
          theirs: theirs.at(-1),
          text: index % 2 === 0 ? outs[0]!.text : outs[1]!.text,
        }),
      );
  });
  if (details) writeFileSync(details, `${lines.join('\n')}\n`);
  const engineLosses = ours
    .filter((r, i) => r.article && r.overlap && r.overlap.recall < 0.5 && theirs[i]!.overlap!.recall > 0.9)
    .map((r) => r.name);
  const engineOnlyRejected = ours.filter((r, i) => r.article && r.rejected && !theirs[i]!.rejected).map((r) => r.name);
  const prose = ours.map((r, i) => [r, theirs[i]!] as const).filter(([, t]) => t.words >= PROSE_WORDS);
  const underHalfOfReadability = prose.filter(([o, t]) => o.words < t.words / 2).map(([o]) => o.name);
  return {
    engine: summarize(ours, window),
    readability: summarize(theirs, window),
    engineLosses,
    engineOnlyRejected,
    underHalfOfReadability,
    readabilityProse: prose.length,
    window,
  };
}

/** The side-by-side table: one row per measure, the engine and plain Readability in two columns. */
export function sideBySide(report: ExtractionReport): string {
  const { engine: e, readability: r } = report;
  const kb = `${report.window.minKb}-${report.window.maxKb} KB`;
  const rows: [string, string, string][] = [
    ['pages', `${e.pages}`, `${r.pages}`],
    ['article pages with expected text', `${e.scored}`, `${r.scored}`],
    ['mean precision (4-gram shingles)', f3(e.precision), f3(r.precision)],
    ['mean recall', f3(e.recall), f3(r.recall)],
    ['F1 (of the two means)', f3(e.f1), f3(r.f1)],
    ['mean F1 per page', f3(e.meanPageF1), f3(r.meanPageF1)],
    ['pages read under half the article (recall < 0.5)', `${e.underHalf}`, `${r.underHalf}`],
    ['article pages rejected', `${e.rejected}`, `${r.rejected}`],
    [`pages marked as no article (${e.nonArticles}) rejected`, `${e.nonArticlesRejected}`, `${r.nonArticlesRejected}`],
    ['pages with snippets', `${e.snippetPages}`, `${r.snippetPages}`],
    ['must-contain snippets read', pct(e.includeRate), pct(r.includeRate)],
    ['must-not-contain snippets leaked', pct(e.leakRate), pct(r.leakRate)],
    ['time per page, median', ms(e.medianMs), ms(r.medianMs)],
    ['time per page, worst', ms(e.worstMs), ms(r.worstMs)],
    [`time, pages of ${kb} (${e.typical}), median`, ms(e.typicalMedianMs), ms(r.typicalMedianMs)],
    [`time, pages of ${kb}, worst`, ms(e.typicalWorstMs), ms(r.typicalWorstMs)],
    [`CPU time, pages of ${kb}, median`, ms(e.typicalMedianCpuMs), ms(r.typicalMedianCpuMs)],
    [`CPU time, pages of ${kb}, worst`, ms(e.typicalWorstCpuMs), ms(r.typicalWorstCpuMs)],
  ];
  const header: [string, string, string] = ['Measure', 'Engine', 'Plain Readability'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

const FIXTURE_PAGES = path.join(__dirname, '..', 'test', 'fixtures', 'pages');
const FIXTURE_PDFS = path.join(__dirname, '..', 'test', 'fixtures', 'pdf');

/**
 * The repository's article fixtures (those with an expected text) where the engine reads under half of the article
 * while plain Readability reads over 90 % of it: the development set's "engine losses", on pages anyone can run.
 */
function readabilityFloorRow(): Row {
  const files = readdirSync(FIXTURE_PAGES).filter((f) => f.endsWith('.expected.txt'));
  const losses: string[] = [];
  for (const file of files) {
    const name = file.replace(/\.expected\.txt$/, '');
    const html = readFileSync(path.join(FIXTURE_PAGES, `${name}.html`), 'utf8');
    const expected = readFileSync(path.join(FIXTURE_PAGES, file), 'utf8');
    const ours = shingleOverlap(expected, engine(html, `https://example.org/${name}`).text ?? '').recall;
    const theirs = shingleOverlap(expected, readability(html, `https://example.org/${name}`).text ?? '').recall;
    if (ours < 0.5 && theirs > 0.9) losses.push(name);
  }
  return {
    bench: 'engine reads < half where Readability > 90 % (fixture pages)',
    case: `${files.length} article pages of test/fixtures/pages`,
    result: `${losses.length}`,
    target: '0',
    verdict: losses.length === 0 ? 'meets' : 'misses',
    note: losses.join(' '),
  };
}

/** PDFs: sentences read in order and furniture leaked, for each layout, and the time each took. */
async function pdfRows(): Promise<Row[]> {
  const layouts: [string, LaidOut][] = [
    ['two-column paper, 2 pages (test layout)', twoColumnPaper()],
    ['slide deck, 4 slides (test layout)', slideDeck()],
  ];
  const rows: Row[] = [];
  const measure = async (bytes: Uint8Array) => {
    const started = performance.now();
    const reading = await extractPdfArticle(bytes);
    return { reading, ms: performance.now() - started, text: articleText(reading.article) };
  };
  await measure(twoColumnPaper().pdf); // warm-up: pdf.js's first document pays for its start-up
  for (const [name, layout] of layouts) {
    const { reading, ms: took, text } = await measure(layout.pdf);
    let at = 0;
    let inOrder = 0;
    for (const sentence of layout.inOrder) {
      const found = text.indexOf(sentence, at);
      if (found >= 0) {
        inOrder++;
        at = found + sentence.length;
      }
    }
    const leaked = layout.absent.filter((t) => text.includes(t));
    rows.push({
      bench: 'PDF: sentences in order / furniture leaked',
      case: name,
      result: `${inOrder}/${layout.inOrder.length} / ${leaked.length}`,
      target: `${layout.inOrder.length}/${layout.inOrder.length} / 0`,
      verdict: inOrder === layout.inOrder.length && leaked.length === 0 ? 'meets' : 'misses',
      note: `${ms(took)}; ${reading.runningLines} running lines dropped, ${reading.captions} captions, references ${reading.referencesSkipped ? 'skipped' : 'none'}${leaked.length ? `; leaked: ${leaked.join(', ')}` : ''}`,
    });
  }
  // The real PDFs of test/fixtures/pdf (their tests check the reading order page by page: pdf-real.test.ts).
  const real: [string, string][] = [
    ['Wikipedia "PDF.js" printed to PDF, 1 page', 'pdfjs-wikipedia.pdf'],
    ['Melodie paper, one column with footnotes, 4 pages', 'melodie-paper.pdf'],
    ['Ethereum Yellow Paper, two columns, 42 pages', 'ethereum-yellow-paper.pdf'],
    ['Ethereum Yellow Paper in Chinese, two columns', 'ethereum-yellow-paper-chinese.pdf'],
    ['EuroPython talk slides, 53 slides', 'five-types-of-database-slides.pdf'],
  ];
  for (const [name, file] of real) {
    const read = await measure(readFileSync(path.join(FIXTURE_PDFS, file)));
    rows.push({
      bench: 'PDF: words read',
      case: `${name} (test/fixtures/pdf)`,
      result: `${countWords(read.text)} words (${read.text.length} characters), ${read.reading.article.blocks.filter((b) => b.kind === 'heading').length} chapters`,
      note: `${ms(read.ms)}; ${read.reading.runningLines} running lines dropped, ${read.reading.captions} captions, references ${read.reading.referencesSkipped ? 'skipped' : 'none'}`,
    });
  }
  return rows;
}

export const extraction: Bench = {
  name: 'extraction',
  title: 'Article extraction on the development set, engine and plain Readability side by side',
  async run(options) {
    const always = [readabilityFloorRow(), ...(await pdfRows())];
    if (!options.pages) {
      return [
        {
          bench: 'article extraction',
          case: 'skipped',
          result: 'no --pages DIR',
          note: 'build the development set with bench/devset.ts (ARCHITECTURE.md, Benchmarks)',
        },
        ...always,
      ];
    }
    const sources = options.sources;
    const report = compareExtractors(options.pages, sources, options.details, options.progress, {
      minKb: options.minKb,
      maxKb: options.maxKb,
    });
    console.log(
      `\nArticle extraction, ${options.pages}${sources ? ` (${sources.join(', ')})` : ''}:\n${sideBySide(report)}`,
    );
    console.log(
      `Pages where the engine reads under half while Readability reads over 90 %: ${report.engineLosses.join(', ') || 'none'}`,
    );
    console.log(
      `Article pages the engine rejects and Readability reads: ${report.engineOnlyRejected.join(', ') || 'none'}`,
    );
    console.log(
      `Pages where the engine keeps under half of Readability's words (of ${report.readabilityProse} where Readability reads ${PROSE_WORDS}+): ${report.underHalfOfReadability.join(', ') || 'none'}`,
    );
    const { engine: e, readability: r } = report;
    const kb = `${report.window.minKb}-${report.window.maxKb} KB`;
    console.log(
      `Typical pages (${kb}, ${e.typical}): engine median ${ms(e.typicalMedianMs)}, worst ${ms(e.typicalWorstMs)}` +
        ` (CPU ${ms(e.typicalMedianCpuMs)}, ${ms(e.typicalWorstCpuMs)}); plain Readability median` +
        ` ${ms(r.typicalMedianMs)}, worst ${ms(r.typicalWorstMs)} (CPU ${ms(r.typicalMedianCpuMs)},` +
        ` ${ms(r.typicalWorstCpuMs)}); engine / Readability, median: ${(e.typicalMedianMs / r.typicalMedianMs).toFixed(2)}`,
    );
    const set = `${e.pages} pages`;
    // The speed target's rows: the engine's wall time against the target, CPU times and Readability's beside it.
    const timeRow = (which: string, wall: number, cpu: number, plainWall: number, plainCpu: number): Row => ({
      bench: `extraction time, ${kb} pages, ${which}`,
      case: `${e.typical} pages`,
      result: `${ms(wall)} (CPU ${ms(cpu)})`,
      target: `< ${TARGET_MS} ms`,
      verdict: below(wall, TARGET_MS),
      note: `Readability ${ms(plainWall)} (CPU ${ms(plainCpu)})`,
    });
    const rows: Row[] = [
      {
        bench: 'extraction F1 (4-gram shingles)',
        case: `${set}, ${e.scored} with expected text`,
        result: `${f3(e.f1)} (Readability ${f3(r.f1)})`,
        target: `>= ${TARGET_F1}`,
        verdict: atLeast(e.f1, TARGET_F1),
        note: `precision ${f3(e.precision)}, recall ${f3(e.recall)}`,
      },
      {
        bench: 'extraction F1 vs plain Readability',
        case: set,
        result: `${e.f1 - r.f1 >= 0 ? '+' : ''}${(e.f1 - r.f1).toFixed(3)}`,
        target: '>= 0',
        verdict: atLeast(e.f1 - r.f1, 0),
      },
      {
        bench: 'engine reads < half where Readability > 90 %',
        case: set,
        result: `${report.engineLosses.length}`,
        target: '0',
        verdict: report.engineLosses.length === 0 ? 'meets' : 'misses',
        note: report.engineLosses.slice(0, 5).join(' '),
      },
      {
        bench: "engine keeps < half of Readability's words",
        case: `${report.readabilityProse} pages where Readability reads ${PROSE_WORDS}+ words`,
        result: `${report.underHalfOfReadability.length}`,
        target: '0',
        verdict: report.underHalfOfReadability.length === 0 ? 'meets' : 'misses',
        note: report.underHalfOfReadability.slice(0, 5).join(' '),
      },
      {
        bench: 'article pages rejected',
        case: set,
        result: `${e.rejected} (Readability ${r.rejected})`,
        target: '0',
        verdict: e.rejected === 0 ? 'meets' : 'misses',
        note: report.engineOnlyRejected.slice(0, 5).join(' '),
      },
      {
        bench: 'snippets: must-contain read / must-not leaked',
        case: `${e.snippetPages} pages`,
        result: `${pct(e.includeRate)} / ${pct(e.leakRate)}`,
        note: `Readability ${pct(r.includeRate)} / ${pct(r.leakRate)}`,
      },
      timeRow('median', e.typicalMedianMs, e.typicalMedianCpuMs, r.typicalMedianMs, r.typicalMedianCpuMs),
      timeRow('worst', e.typicalWorstMs, e.typicalWorstCpuMs, r.typicalWorstMs, r.typicalWorstCpuMs),
      ...always,
    ];
    return rows;
  },
};
