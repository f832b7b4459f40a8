// Issue 27: real, public PDFs of three layouts (test/fixtures/pdf/README.md says where each is from and its licence),
// read as a listener hears them. What each page says is taken from the PDF itself by pdf.js, independently of the
// reader: lines of the page's body text (its most common font size, six words or more), which must all come in the
// article, page after page, in order; the running heads, page numbers and slide footers must not.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { articleText } from '../../../src/speech/source/article';
import { ParseRunner } from '../../../src/speech/parse/parse-runner';
import { articleFacts } from '../../../src/speech/text/article-facts';

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'pdf');
// eslint-disable-next-line no-control-regex -- control characters are exactly what this matches
const UNMAPPED = /[\u0000-\u0008\u000b-\u001f\ufffd]/;
const normal = (text: string) => text.normalize('NFKC').replace(/\s+/g, ' ').trim();

interface PageLine {
  page: number;
  text: string;
}

/** Up to `perPage` body lines of each page of `pages` (pdf.js text runs in the page's most common font size). */
async function bodyLines(bytes: Uint8Array, pages: number[], perPage: number): Promise<PageLine[]> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const doc = await pdfjs.getDocument({ data: bytes, verbosity: 0 }).promise;
  const lines: PageLine[] = [];
  try {
    for (const number of pages) {
      const page = await doc.getPage(number);
      const items = (await page.getTextContent()).items.filter(
        (item): item is { str: string; height: number } & typeof item => 'str' in item,
      );
      const sizes = new Map<number, number>();
      for (const item of items)
        sizes.set(Math.round(item.height), (sizes.get(Math.round(item.height)) ?? 0) + item.str.length);
      const body = [...sizes].sort((a, b) => b[1] - a[1])[0]?.[0];
      const candidates = items
        .filter((item) => Math.round(item.height) === body)
        .map((item) => normal(item.str))
        .filter((text) => text.split(' ').length >= 6 && !/[-‐]$/.test(text))
        .filter((text) => (text.match(/\p{L}/gu)?.length ?? 0) >= text.length * 0.7);
      // Spread over the page (at its quarters: on a two-column page, lines of both columns, so that reading across
      // the columns line by line would bring them out of order), as many as asked for.
      const last = candidates.length - 1;
      const quarters = [0, 0.25, 0.5, 0.75, 1].map((q) => Math.round(q * last));
      const picks = [...new Set(perPage >= quarters.length ? quarters : [0, Math.round(last / 2), last])].slice(
        0,
        perPage,
      );
      for (const at of picks) if (candidates[at]) lines.push({ page: number, text: candidates[at] });
    }
  } finally {
    await doc.destroy();
  }
  return lines;
}

function assertPagesInOrder(text: string, lines: PageLine[]): void {
  let at = 0;
  for (const line of lines) {
    const found = text.indexOf(line.text, at);
    assert.ok(found >= 0, `page ${line.page}: "${line.text}" is missing or out of order`);
    at = found + line.text.length;
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('real PDFs', () => {
  const parser = new ParseRunner();
  const signal = new AbortController().signal;

  it('a two-column paper (the Ethereum Yellow Paper, 42 pages): both columns of every page in order, no running head or page number', async () => {
    const bytes = new Uint8Array(readFileSync(path.join(FIXTURES, 'ethereum-yellow-paper.pdf')));
    const { article } = await parser.readPdf(bytes, 'The PDF', signal);
    const text = normal(articleText(article));
    assert.match(article.title ?? '', /^Ethereum Yellow Paper/);
    // The body pages before the references (pages 18-20; references are not read: README, PDFs).
    const lines = await bodyLines(bytes, range(1, 17), 5);
    assert.ok(lines.length >= 60, `${lines.length} lines sampled`);
    assertPagesInOrder(text, lines);
    const headings = article.blocks.filter((b) => b.kind === 'heading').map((b) => b.text);
    for (const chapter of ['1. Introduction', '2. The Blockchain Paradigm', '9. Execution Model', '15. Conclusion'])
      assert.ok(headings.includes(chapter), `chapter "${chapter}" in ${headings.join(' | ')}`);
    // The running head of every page but the first: read once, as the title block.
    assert.equal(text.split('ETHEREUM: A SECURE DECENTRALISED GENERALISED TRANSACTION LEDGER').length - 1, 1);
    assert.doesNotMatch(text, /SHANGHAI VERSION [0-9a-f]{7} – \d{4}-\d\d-\d\d.*SHANGHAI VERSION/s);
    // Its TeX math fonts map some glyphs to no character: pdf.js gives control characters, which are not read.
    assert.doesNotMatch(text, UNMAPPED);
  });

  // A CJK PDF: its fonts use Adobe's predefined encodings, which pdf.js decodes only with the character maps
  // (shipped in dist/pdf-cmaps); without them it read as its Latin words (24,700 characters of text, now 6,000).
  it('a Chinese two-column paper (the Yellow Paper in Chinese): its Chinese text, in order, lines joined without spaces, told as Chinese', async () => {
    const bytes = new Uint8Array(readFileSync(path.join(FIXTURES, 'ethereum-yellow-paper-chinese.pdf')));
    const { article } = await parser.readPdf(bytes, 'The PDF', signal);
    const text = articleText(article);
    let at = 0;
    for (const sentence of [
      '以太坊：一种安全去中心化的通用交易账本',
      // Across a line end in the PDF ("全球信息共享" | "的成本越来越低"): no space put between them.
      '全球信息共享的成本越来越低。',
      '1.1. 驱动因素. 这个项目有很多目标',
      '元素类型定义如下',
    ]) {
      const found = text.indexOf(sentence, at);
      assert.ok(found >= 0, `"${sentence}" missing or out of order`);
      at = found + sentence.length;
    }
    assert.ok(text.length > 20_000, `${text.length} characters`);
    assert.doesNotMatch(text, UNMAPPED);
    assert.equal(articleFacts(article).language.language?.name, 'Chinese');
  });

  it('a slide deck (53 slides): every slide title a chapter in order, no slide number or footer', async () => {
    const bytes = new Uint8Array(readFileSync(path.join(FIXTURES, 'five-types-of-database-slides.pdf')));
    const { article } = await parser.readPdf(bytes, 'The PDF', signal);
    const text = normal(articleText(article));
    assert.equal(article.title, 'Explaining the 5 types of database and how to choose between them');
    const headings = article.blocks.filter((b) => b.kind === 'heading').map((b) => b.text);
    assert.ok(headings.length >= 40, `${headings.length} chapters`);
    let at = -1;
    for (const title of ['1. Relational', 'Concept: SQL', '2. Columnar', '3. Document', '4. Key Value', '5. Graph']) {
      const found = headings.indexOf(title, at + 1);
      assert.ok(found > at, `"${title}" missing or out of order in ${headings.join(' | ')}`);
      at = found;
    }
    assertPagesInOrder(text, await bodyLines(bytes, range(1, 53), 1));
    assert.doesNotMatch(text, /Mastodon: @much_of_a/);
    assert.doesNotMatch(text, /\b\d{1,2} \/ 53\b/);
  });

  it('a single-column paper with footnotes (4 pages): body lines of every page in order, footnotes left out, line-end hyphens joined', async () => {
    const bytes = new Uint8Array(readFileSync(path.join(FIXTURES, 'melodie-paper.pdf')));
    const { article } = await parser.readPdf(bytes, 'The PDF', signal);
    const text = normal(articleText(article));
    assert.equal(article.title, 'Melodie: Agent-based Modeling in Python');
    const lines = await bodyLines(bytes, range(1, 4), 5);
    assert.ok(lines.length >= 12, `${lines.length} lines sampled`);
    assertPagesInOrder(text, lines);
    const headings = article.blocks.filter((b) => b.kind === 'heading').map((b) => b.text);
    for (const chapter of ['Introduction', 'Statement of need', 'Overview', 'Infrastructure'])
      assert.ok(headings.includes(chapter), `chapter "${chapter}" in ${headings.join(' | ')}`);
    // "flex-" at a line end, "ible" on the next: one word.
    assert.match(text, /ABMs are also flexible to consider/);
    // The footnotes at the foot of page 1 ("1 Link to ABM4ALL: https://…") are smaller than the body: not read.
    assert.doesNotMatch(text, /Link to ABM4ALL/);
  });

  it('a single-column page (Wikipedia "PDF.js" printed): every body line in order', async () => {
    const bytes = new Uint8Array(readFileSync(path.join(FIXTURES, 'pdfjs-wikipedia.pdf')));
    const { article } = await parser.readPdf(bytes, 'The PDF', signal);
    const lines = await bodyLines(bytes, [1], 3);
    assert.ok(lines.length >= 2, `${lines.length} lines sampled`);
    assertPagesInOrder(normal(articleText(article)), lines);
  });
});
