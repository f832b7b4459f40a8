// PDFs (issue 27): text in reading order (two columns included), running heads, footers and page numbers dropped,
// hyphenated words joined, headings kept, references and captions left out, a scan refused; read in the parse worker
// (its limits), by URL through the real pipeline from a loopback server, and from a file by the command line.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readArticleInput } from '../../../src/cli/article-input';
import { UsageError } from '../../../src/engine/settings';
import { createSpeechPipeline } from '../../../src/speech';
import { type Article, articleMarkdown } from '../../../src/speech/source/article';
import { ParseRunner } from '../../../src/speech/parse/parse-runner';
import { PdfProblem, extractPdfArticle } from '../../../src/speech/source/pdf-article';
import { type LaidOut, scannedPdf, slideDeck, twoColumnPaper } from '../../support/pdf-layouts';
import { type PageServer, runJob, serve, startPageServer } from '../../support/speech-support';

const WIKIPEDIA = path.join(__dirname, '..', '..', 'fixtures', 'pdf', 'pdfjs-wikipedia.pdf');

function assertInOrder(markdown: string, sentences: string[]): void {
  let at = 0;
  for (const sentence of sentences) {
    const found = markdown.indexOf(sentence, at);
    assert.ok(found >= 0, `"${sentence}" is missing or out of order in:\n${markdown}`);
    at = found + sentence.length;
  }
}

function assertRead(article: Article, layout: LaidOut): string {
  const markdown = articleMarkdown(article);
  assertInOrder(markdown, layout.inOrder);
  for (const text of layout.absent) assert.ok(!markdown.includes(text), `"${text}" was read:\n${markdown}`);
  return markdown;
}

describe('PDF reading', () => {
  const parser = new ParseRunner();
  const signal = new AbortController().signal;

  it('a two-column paper: both columns of every page in order, heads, page numbers, caption and references left out', async () => {
    const paper = twoColumnPaper();
    const { article } = await parser.readPdf(paper.pdf, 'The PDF', signal);
    const markdown = assertRead(article, paper);
    assert.equal(article.title, 'Listening to Quiet Machines in Two Columns');
    assert.deepEqual(
      article.blocks.filter((b) => b.kind === 'heading').map((b) => b.text),
      ['1 Introduction', '2 Method', '3 Results', 'References'],
    );
    assert.match(markdown, /## References\n\nThe references are not read\.\n$/);
    // Page numbers: no paragraph is a lone number.
    assert.ok(!article.blocks.some((b) => b.kind === 'paragraph' && /^\d+$/.test(b.text)));
  });

  it('a slide deck: every slide in order, its titles as chapters, the footer on every slide left out', async () => {
    const deck = slideDeck();
    const { article } = await parser.readPdf(deck.pdf, 'The PDF', signal);
    assertRead(article, deck);
    assert.equal(article.title, 'Quiet Machines');
    assert.deepEqual(
      article.blocks.filter((b) => b.kind === 'heading').map((b) => b.text),
      ['Why listen', 'How they work', 'What comes next'],
    );
  });

  it('a real PDF (a Wikipedia article printed to PDF): its body text read whole, the infobox beside it not mixed in', async () => {
    const { article } = await parser.readPdf(readFileSync(WIKIPEDIA), 'The PDF', signal);
    const markdown = articleMarkdown(article);
    assert.equal(article.title, 'PDF.js');
    assertInOrder(markdown, [
      'PDF.js is a JavaScript library that renders Portable Document Format (PDF) files',
      '## History and application',
      'PDF.js was originally created as an extension for Firefox',
      // Beside the infobox, about 1 em from it: each line of the body stays whole.
      'Its implementation uses the Canvas element from HTML5, which allows for fast rendering speeds.',
      'PDF.js is used in Thunderbird, ownCloud, Nextcloud, and as browser extensions for Google Chrome/Chromium',
      '## Behavior',
    ]);
  });

  it('a scan without a text layer fails with not_an_article saying so', async () => {
    await assert.rejects(parser.readPdf(scannedPdf(), 'The PDF', signal), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'not_an_article');
      assert.match(error.message, /has no text layer \(is it a scan\?\).*OCR/);
      return true;
    });
  });

  it("a PDF over the reader's bounds (pages, characters) is refused before it is read whole, saying what to do", async () => {
    const deck = slideDeck().pdf;
    await assert.rejects(
      extractPdfArticle(deck, 'deck.pdf', { maxPages: 2, maxCharacters: 1_000_000 }),
      (error: Error) => {
        assert.ok(error instanceof PdfProblem);
        assert.match(
          error.message,
          /^deck\.pdf has \d+ pages; Article Audio reads PDFs of up to 2 pages\. Save the pages/,
        );
        return true;
      },
    );
    await assert.rejects(
      extractPdfArticle(deck, 'deck.pdf', { maxPages: 1_000, maxCharacters: 60 }),
      (error: Error) => {
        assert.ok(error instanceof PdfProblem);
        assert.match(error.message, /^deck\.pdf holds more than 60 characters of text \(page \d+ of \d+\)/);
        return true;
      },
    );
    // Within the bounds it reads as before.
    assert.ok((await extractPdfArticle(deck, 'deck.pdf')).article.blocks.length > 0);
  });

  it('bytes that only claim to be a PDF fail with not_an_article', async () => {
    await assert.rejects(
      parser.readPdf(Buffer.from('%PDF-1.4\nnothing else here at all\n'), 'The PDF', signal),
      (error: Error & { code?: string }) => error.code === 'not_an_article',
    );
  });
});

describe('a PDF by URL and by file', () => {
  let server: PageServer;
  let work: string;
  const pipeline = createSpeechPipeline({ workers: 1 });
  const paper = twoColumnPaper();
  before(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'aa-pdf-'));
    server = await startPageServer({
      '/paper.pdf': serve(paper.pdf, 'application/pdf'),
      // Many servers send PDFs as a download: the signature tells.
      '/download': serve(paper.pdf, 'application/octet-stream'),
      '/scan.pdf': serve(scannedPdf(), 'application/pdf'),
    });
  });
  after(async () => {
    await server.close();
    await pipeline.close();
    rmSync(work, { recursive: true, force: true });
  });

  for (const route of ['/paper.pdf', '/download']) {
    it(`the engine converts a PDF by URL (${route}): the article as read, chapters from its headings`, async () => {
      const run = await runJob(pipeline, { modelId: 'article-audio-1-mini', url: server.url(route) });
      try {
        assert.equal(run.error, undefined, String(run.error));
        const read = readFileSync(path.join(run.dir, 'article.md'), 'utf8');
        assertInOrder(read, paper.inOrder);
        // Without the word timestamps (`<00:00:01.234>`) between the words.
        const vtt = readFileSync(path.join(run.dir, 'transcript.vtt'), 'utf8').replace(/<[^>]*>/g, '');
        assert.match(vtt, /important word split/);
        assert.doesNotMatch(vtt, /Proceedings of the Workshop|Journal of Silence/);
        const chapters = JSON.parse(readFileSync(path.join(run.dir, 'chapters.json'), 'utf8')) as {
          chapters: { title: string }[];
        };
        assert.ok(
          chapters.chapters.some((c) => c.title === '2 Method'),
          JSON.stringify(chapters),
        );
      } finally {
        run.dispose();
      }
    });
  }

  it('a scanned PDF by URL fails the job with not_an_article before any speech', async () => {
    const run = await runJob(pipeline, { modelId: 'article-audio-1-mini', url: server.url('/scan.pdf') });
    run.dispose();
    assert.equal(run.error?.code, 'not_an_article', String(run.error));
    assert.match(run.error.message, /no text layer/);
    assert.ok(!run.logs.some((line) => /Synthesizing/.test(line)));
  });

  it('the command line reads a PDF file into Markdown text with its headings; a scan is refused', async () => {
    const file = path.join(work, 'paper.pdf');
    writeFileSync(file, paper.pdf);
    const input = await readArticleInput(file);
    assert.equal(input.suggestedName, 'paper');
    assert.equal(input.url, undefined);
    assert.match(input.text ?? '', /^# Listening to Quiet Machines in Two Columns\n/);
    assert.match(input.text ?? '', /\n## 2 Method\n/);
    assertInOrder(input.text ?? '', paper.inOrder);
    const scan = path.join(work, 'scan.pdf');
    writeFileSync(scan, scannedPdf());
    await assert.rejects(
      readArticleInput(scan),
      (error: Error) => error instanceof UsageError && /scan\.pdf has no text layer/.test(error.message),
    );
  });
});
