// Article extraction on saved pages of real-world shapes (test/fixtures/pages): the readable text must match the
// expected text by word overlap, page furniture (menus, ads, cookie banners, footers, comments, sidebars,
// signatures) must be gone, title and headings kept, code and tables summarized; pages that hold no article fail
// the job with not_an_article when fetched from a (loopback) web server by the real pipeline.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { after, before, describe, it } from 'node:test';
import { readArticleInput } from '../../../src/cli/article-input';
import {
  type Article,
  type Block,
  articleMarkdown,
  articleSource,
  articleText,
} from '../../../src/speech/source/article';
import { extractHtmlArticle } from '../../../src/speech/source/html-article';
import { createSpeechPipeline } from '../../../src/speech';
import { parseMarkdown } from '../../../src/speech/source/markdown';
import { UsageError } from '../../../src/engine/settings';
import { type PageServer, runJob, serve, startPageServer, wordOverlap } from '../../support/speech-support';

const PAGES = path.join(__dirname, '..', '..', 'fixtures', 'pages');
const MIN_F1 = 0.9;

interface PageCase {
  name: string;
  title: string;
  headings: string[];
  byline?: string;
  /** Words and phrases of the page's furniture that must not be read. */
  noise: string[];
}

const CASES: PageCase[] = [
  {
    name: 'news',
    title: 'Harbour town votes to restore its tidal mill after 80 years',
    headings: ['A building that outlived its trade', 'Worries about cost and traffic'],
    byline: 'Maria Lindqvist',
    noise: [
      'cookies',
      'accept all',
      'advertisement',
      'subscribe',
      'sign in',
      'breaking',
      'crossword',
      'photograph',
      'share on',
      'related stories',
      'most read',
      'seagull',
      'holiday cottages',
      'you might also like',
      'morning briefing',
      'newsletter',
      'all rights reserved',
      'privacy policy',
      'topics',
      'puzzles',
      'skip to main content',
    ],
  },
  {
    name: 'blog',
    title: 'What I learned from a year of sourdough',
    headings: [
      'The starter is a pet, not a recipe',
      'Three changes that made the biggest difference',
      'What still goes wrong',
    ],
    byline: 'Jonas Berg',
    noise: [
      'share this',
      'pinterest',
      'posted in',
      'tagged',
      'previous post',
      'about jonas',
      'software tester',
      'thoughts on',
      'priya',
      'retarding',
      'sluggish',
      'leave a reply',
      'email address',
      'recent posts',
      'archives',
      'gothenburg',
      'powered by wordpress',
      'min read',
      'notes from a home bakery',
    ],
  },
  {
    name: 'docs',
    title: 'Configuring the cache',
    headings: ['How entries expire', 'Bypassing the cache', 'Clearing the cache'],
    noise: [
      '¶',
      '4.0 beta',
      'search the docs',
      'github',
      'installation',
      'quickstart',
      'api reference',
      'changelog',
      'on this page',
      'previous',
      'edit this page',
      'copyright',
      'sphinx',
      'ttl_seconds',
      'max_entries',
      'select balance',
      'account_id',
    ],
  },
  {
    name: 'forum',
    title: 'Replacing the chain on a 1980s touring bike',
    headings: [],
    byline: 'gravelgran',
    noise: [
      'board index',
      'register',
      'frame fettler',
      'posts:',
      'joined',
      'shropshire',
      'moderator',
      'raleigh',
      'contours',
      'forum rules',
      'post reply',
      'page 1 of 1',
      'who is online',
      'guests',
      'phpbb',
      're:',
      '»',
    ],
  },
  {
    name: 'essay-comments',
    title: 'Why we stopped estimating in hours',
    headings: ['The problem with hours', 'What we do now', 'What we lost'],
    noise: [
      'become a member',
      'categories',
      'mastodon',
      'rss',
      '42 comments',
      'leads a platform team',
      'linkedin',
      'copy link',
      'on-call',
      'design documents',
      'join the discussion',
      'story points',
      'fixed-price',
      'throughput',
      'load 39 more',
      'popular this week',
      'sunday letter',
      'unsubscribe',
      'sponsored',
      'flowboard',
      'imprint',
      'workbench media',
    ],
  },
];

function extract(name: string): Article {
  const html = readFileSync(path.join(PAGES, `${name}.html`), 'utf8');
  const result = extractHtmlArticle(html, `https://example.org/${name}`);
  assert.ok(result, `${name}: no article found`);
  return result.article;
}

describe('pipeline: article extraction from saved pages', () => {
  for (const page of CASES) {
    it(`${page.name}: the readable text matches the expected text (word-overlap F1 ≥ ${MIN_F1}), without the page's furniture`, (t) => {
      const article = extract(page.name);
      const text = articleText(article);
      const expected = readFileSync(path.join(PAGES, `${page.name}.expected.txt`), 'utf8');
      const score = wordOverlap(expected, text);
      t.diagnostic(
        `${page.name}: F1 ${score.f1.toFixed(3)} (precision ${score.precision.toFixed(3)}, recall ${score.recall.toFixed(3)})`,
      );
      assert.ok(
        score.f1 >= MIN_F1,
        `${page.name}: F1 ${score.f1.toFixed(3)} < ${MIN_F1} (precision ${score.precision.toFixed(3)}, recall ${score.recall.toFixed(3)})\n${text}`,
      );

      const lower = text.toLowerCase();
      const found = page.noise.filter((phrase) => lower.includes(phrase));
      assert.deepEqual(found, [], `${page.name}: page furniture was read: ${found.join(' | ')}`);

      assert.equal(article.title, page.title);
      const headings = article.blocks.flatMap((b) => (b.kind === 'heading' ? [b.text] : []));
      assert.deepEqual(headings, page.headings, `${page.name}: headings`);
      if (page.byline) assert.equal(article.byline, page.byline);
    });
  }

  it('news: the quote stays a quote, and the standfirst is the only article text lost', () => {
    const article = extract('news');
    const quotes = article.blocks.filter((b) => b.kind === 'quote');
    assert.deepEqual(
      quotes.map((q) => (q.kind === 'quote' ? q.text : '')),
      ['My grandfather worked the last shift here, and he always said the building would turn again one day.'],
    );
    const expected = readFileSync(path.join(PAGES, 'news.expected.txt'), 'utf8').split('\n').filter(Boolean);
    const text = articleText(article);
    const missing = expected.filter((line) => !text.includes(line));
    // Readability drops the standfirst that sits in the story's header; everything else of the story is read.
    assert.deepEqual(missing, [
      'Councillors backed a plan to bring the old mill back into use as a working museum and a small power station.',
    ]);
  });

  it('blog: the numbered list stays an ordered list of three items', () => {
    const lists = extract('blog').blocks.filter((b) => b.kind === 'list');
    assert.equal(lists.length, 1);
    const list = lists[0]!;
    assert.ok(list.kind === 'list' && list.ordered && list.items.length === 3, JSON.stringify(list));
    assert.match(list.items[0]!, /^Weighing everything/);
  });

  it('docs: code blocks and the table are summarized with their language and size, admonitions kept', () => {
    const article = extract('docs');
    const summaries = article.blocks.flatMap((b): object[] =>
      b.kind === 'code'
        ? [{ kind: b.kind, language: b.language, lineCount: b.lineCount }]
        : b.kind === 'table'
          ? [{ kind: b.kind, rows: b.rows, columns: b.columns }]
          : [],
    );
    // The small table keeps its cells, to be read aloud row by row.
    const table = article.blocks.find((b) => b.kind === 'table');
    assert.deepEqual(table?.kind === 'table' ? [table.cells?.[0], table.cells?.[2]] : [], [
      ['Setting', 'Default', 'Meaning'],
      ['ttl_seconds', '300', 'How long an entry stays valid.'],
    ]);
    assert.deepEqual(summaries, [
      { kind: 'code', language: 'toml', lineCount: 4 },
      { kind: 'table', rows: 4, columns: 3 },
      { kind: 'code', language: 'python', lineCount: 1 },
    ]);
    const markdown = articleMarkdown(article);
    assert.match(markdown, /^# Configuring the cache\n/);
    assert.match(markdown, /A code example in toml, 4 lines: summarized, not read aloud/);
    assert.match(markdown, /A table of 4 rows and 3 columns/);
    assert.match(markdown, /\nWarning\n\nTurning the cache off/);
    assert.doesNotMatch(markdown, /ttl_seconds|SELECT balance/);
  });

  it('forum: the opening post and the replies are read; profiles, signatures and reply subjects are not', () => {
    const article = extract('forum');
    const paragraphs = article.blocks.filter((b) => b.kind === 'paragraph');
    assert.equal(paragraphs.length, 5);
    assert.match(articleText(article), /Soak the freewheel in degreaser overnight/);
  });

  it('keeps short paragraphs that only look like post meta lines or furniture', () => {
    const kept = [
      'By then, prices had risen sharply since 2019.',
      'By 2030 the council wants every roof covered, as agreed on 4 May 2024.',
      'Posted letters took a week in 1920, by all accounts.',
      'Read more slowly than you think you need to, and the text will open up.',
    ];
    const filler =
      'The harbour has been rebuilt many times, and each time the town argued about the cost before agreeing to pay it.';
    const html = `<html><head><title>Harbour notes</title></head><body><article><h1>Harbour notes</h1>
      <p>${filler} ${filler}</p>${kept.map((p) => `<p>${p}</p>`).join('')}<p>${filler} ${filler}</p>
      <p class="post-meta">Posted by Ann » 3 May 2024</p></article></body></html>`;
    const text = articleText(extractHtmlArticle(html)!.article);
    for (const paragraph of kept) assert.ok(text.includes(paragraph), `dropped: ${paragraph}`);
    assert.doesNotMatch(text, /Posted by Ann/);
  });

  it('component-wrappers: a how-to post whose blocks are all in "cmp-…" wrappers is read whole, never less than plain Readability reads', () => {
    const html = readFileSync(path.join(PAGES, 'component-wrappers.html'), 'utf8');
    const article = extract('component-wrappers');
    const text = articleText(article);
    const expected = readFileSync(path.join(PAGES, 'component-wrappers.expected.txt'), 'utf8');
    const score = wordOverlap(expected, text);
    assert.ok(score.recall >= 0.95 && score.precision >= 0.9, JSON.stringify(score));
    assert.equal(article.title, 'How to rotate SSH host keys without locking anyone out');
    assert.deepEqual(
      article.blocks.filter((b) => b.kind === 'heading').map((b) => b.text),
      [
        'Why rotate host keys at all',
        'Before you start',
        'Step one: generate the new keys next to the old ones',
        'Step two: teach the clients about both keys',
        'Step three: switch the servers over',
        'Step four: clean up',
        'Troubleshooting',
        'Wrapping up',
      ],
    );
    assert.doesNotMatch(text, /cookies|All rights reserved|Hardening sshd/);
    const { document } = parseHTML(html) as unknown as { document: never };
    const plain = new Readability(document).parse();
    const words = (t: string) => t.split(/\s+/).filter(Boolean).length;
    assert.ok(words(text) >= words(plain?.textContent ?? '') * 0.9, `${words(text)} words read`);
  });

  // Issue 27: a gallery whose captions are the article (a how-to told in photos) was read as its two intro paragraphs
  // and last line, a tenth of what plain Readability reads: the engine leaves figures out, and the floor measured
  // Readability's reading the same way. Figures are read when they hold a good part of the prose (FIGURES_SHARE).
  it('photo-gallery: a how-to told in photo captions is read whole, without photo credits or repeated slide titles', () => {
    const html = readFileSync(path.join(PAGES, 'photo-gallery.html'), 'utf8');
    const article = extract('photo-gallery');
    const text = articleText(article);
    const expected = readFileSync(path.join(PAGES, 'photo-gallery.expected.txt'), 'utf8');
    const score = wordOverlap(expected, text);
    assert.ok(score.recall >= 0.95 && score.precision >= 0.9, JSON.stringify(score));
    assert.equal(article.title, 'Build a worm box for your balcony');
    const at = ['Draw the sides', 'Clamp the board', 'move the finished compost', 'household of two'].map((s) =>
      text.indexOf(s),
    );
    assert.ok(
      at.every((i, k) => i >= 0 && (k === 0 || i > at[k - 1]!)),
      `steps in order: ${at.join(' ')}`,
    );
    assert.doesNotMatch(text, /Photo: Weekend Workshop|All rights reserved|More from the workshop/);
    assert.ok(
      article.blocks.every((b) => !('text' in b) || !(b.text ?? '').includes('Build a worm box')),
      'the slide title under every photo is not read (only the article title is)',
    );
    const { document } = parseHTML(html) as unknown as { document: never };
    const plain = new Readability(document).parse();
    const words = (t: string) => t.split(/\s+/).filter(Boolean).length;
    assert.ok(words(text) >= words(plain?.textContent ?? '') * 0.5, `${words(text)} words read`);
  });

  it('an ordinary article does not read the caption under its photo', () => {
    const html = `<html><head><title>Tides</title></head><body><article><h1>Tides</h1>${'<p>The tide comes in twice a day, and the mill on the estuary used it to grind grain for three hundred years before the last miller left.</p>'.repeat(6)}<figure><img src="/mill.jpg" alt=""><figcaption><p>The mill in 1921, from the harbour wall.</p><span>Photo: town archive</span></figcaption></figure>${'<p>Restoring it will take two summers and a crane that can reach across the water from the quay.</p>'.repeat(3)}</article></body></html>`;
    const result = extractHtmlArticle(html, 'https://example.org/tides');
    assert.ok(result);
    const text = articleText(result.article);
    assert.match(text, /crane that can reach/);
    assert.doesNotMatch(text, /The mill in 1921|town archive/);
  });

  it('link lists and app shells are not articles', () => {
    for (const name of ['link-list', 'app-shell']) {
      const html = readFileSync(path.join(PAGES, `${name}.html`), 'utf8');
      assert.equal(extractHtmlArticle(html, `https://example.org/${name}`), undefined, name);
    }
  });
});

interface FailureCase {
  name: string;
  what: string;
  title: string;
  /** Of the page's furniture: none of it may be read. */
  noise: string[];
  /** What plain Readability reads on this page where the engine must not (the failure class is real). */
  plainReads?: string;
  /** A sentence of the article that plain Readability does not read on this page (the failure class is real). */
  plainMisses?: string;
}

// Each page reproduces, small, the structure of real pages on which extraction failed: the article's own wrapper
// named like furniture, a page inside one big form, a cookie notice bigger than the article, a footer with an
// address and a copyright line next to a short article, a news story full of links with a ticker and a row of
// section names glued together; a page with a PHP warning printed before it, or with its styles and title saved ahead
// of the `<html>` tag; an article inside an `<aside>` (which Readability drops); a post of three short lines beside a
// bigger cookie notice and comment form.
const FAILURES: FailureCase[] = [
  {
    name: 'share-wrapper',
    what: 'an article whose wrapper has "share" and "tags" classes',
    title: 'The quiet return of the night train',
    noise: [
      'share on',
      'share this',
      'tags:',
      'most read',
      'freight',
      'subscribe',
      'station road',
      'all rights reserved',
      'by henrik',
    ],
  },
  {
    name: 'form-wrapped',
    what: 'a page wrapped in a form',
    title: 'County opens three new cycle paths',
    noise: [
      'search',
      'bins and recycling',
      'council tax',
      'was this page helpful',
      'send feedback',
      'county hall',
      'accessibility',
    ],
  },
  {
    name: 'cookie-notice',
    what: 'a cookie notice bigger than the article',
    title: 'Beekeepers report a record honey harvest',
    noise: ['cookies', 'partners', 'accept all', 'reject all', 'read more', 'privacy', 'legitimate interest'],
    plainReads: 'This website uses cookies to improve your experience',
  },
  {
    name: 'footer-address',
    what: 'a footer with an address and a copyright line',
    title: 'Why our library now lends tools',
    noise: [
      'market street',
      'telephone',
      'opening hours',
      '©',
      'all rights reserved',
      'registered charity',
      'catalogue',
    ],
    plainReads: 'Greenfield Library, 21 Market Street',
  },
  {
    name: 'link-heavy-news',
    what: 'a link-heavy news story with a ticker and a row of section names, glued',
    title: 'Markets close lower as chipmakers slide',
    noise: ['usd476', 'eur527', 'rur7', 'wework', 'cryptocurrencies', 'more from markets', 'gold steadies'],
    plainReads: 'USD476.98EUR527.92RUR7.49',
  },
  {
    name: 'warning-before-page',
    what: 'a page with a PHP warning printed before <!DOCTYPE>',
    title: 'A new start for the reading room',
    noise: ['warning', 'mysql', 'tagcloud.php', 'archive', 'may 2014'],
    plainMisses: 'After two quiet years this blog moves to a new server tonight',
  },
  {
    name: 'head-before-html',
    what: 'a saved page with its styles, scripts and title before the <html> tag',
    title: "Meet the gardener who grows a city's history",
    noise: ['teaser-grid', 'datalayer', 'news arts food', 'all rights reserved', '5 main street'],
    plainMisses: 'In a yard behind a laundromat',
  },
  {
    name: 'aside-wrapper',
    what: "an article inside an <aside> that wraps the page's content",
    title: 'Novel about a 1960s summer wins the book prize',
    noise: ['commuters', 'football club', 'imprint', '19:16', 'the jury said'],
    plainMisses: 'The jury praised the book',
  },
  {
    name: 'short-post',
    what: 'a post of three short lines beside a bigger cookie notice and comment form',
    title: 'Doing nothing is also a choice',
    noise: ['cookies', 'leave a reply', 'commenting using', 'categories', 'june 2013', 'share this', '20:51'],
    plainReads: 'This site uses cookies',
  },
];

describe('pipeline: extraction failure classes of real pages', () => {
  for (const page of FAILURES) {
    it(`${page.what}: the article is read, none of the furniture`, (t) => {
      const html = readFileSync(path.join(PAGES, `${page.name}.html`), 'utf8');
      const result = extractHtmlArticle(html, `https://example.org/${page.name}`);
      assert.ok(result, `${page.name}: rejected as not an article`);
      const text = articleText(result.article);
      const expected = readFileSync(path.join(PAGES, `${page.name}.expected.txt`), 'utf8');
      const score = wordOverlap(`${page.title}\n${expected}`, text);
      t.diagnostic(
        `${page.name}: F1 ${score.f1.toFixed(3)} (precision ${score.precision.toFixed(3)}, recall ${score.recall.toFixed(3)})`,
      );
      assert.ok(score.f1 >= 0.95, `${page.name}: F1 ${score.f1.toFixed(3)}\n${text}`);
      const lower = text.toLowerCase();
      assert.deepEqual(
        page.noise.filter((phrase) => lower.includes(phrase)),
        [],
        `${page.name}: furniture read\n${text}`,
      );
      assert.equal(result.article.title, page.title);
      if (page.plainReads) {
        // Plain Readability over the same untouched page reads the furniture: the engine's work is what keeps it out.
        const { document } = parseHTML(html) as unknown as { document: never };
        const plain = new Readability(document).parse();
        assert.ok(
          plain?.textContent?.includes(page.plainReads),
          `${page.name}: plain Readability no longer reads "${page.plainReads}"`,
        );
      }
      if (page.plainMisses) {
        const { document } = parseHTML(html) as unknown as { document: never };
        const plain = new Readability(document).parse();
        assert.ok(
          !plain?.textContent?.includes(page.plainMisses),
          `${page.name}: plain Readability now reads "${page.plainMisses}"`,
        );
      }
    });
  }

  it('prose with a few joined words ("iPhone", "McDonald", "YouTube") is not taken for a glued ticker', () => {
    const kept = [
      'She filmed it on an iPhone and posted it to YouTube, where McDonald saw it.',
      'PayPal and eBay split in 2015.',
    ];
    const filler =
      'The harbour has been rebuilt many times, and each time the town argued about the cost before agreeing to pay it.';
    const html = `<html><head><title>Harbour notes</title></head><body><article><h1>Harbour notes</h1>
      <p>${filler} ${filler}</p>${kept.map((p) => `<p>${p}</p>`).join('')}<p>${filler} ${filler}</p></article></body></html>`;
    const text = articleText(extractHtmlArticle(html)!.article);
    for (const paragraph of kept) assert.ok(text.includes(paragraph), `dropped: ${paragraph}`);
  });

  it('a page without an <html> tag (starting at <head>, or a bare fragment) is read like the whole page', () => {
    const filler =
      'The harbour has been rebuilt many times, and each time the town argued about the cost before agreeing to pay it.';
    const body = `<h1>Harbour notes</h1>${`<p>${filler}</p>`.repeat(3)}`;
    const pages = [
      `<!DOCTYPE html><head><title>Harbour notes</title></head><body>${body}</body>`,
      body,
      `\uFEFF<?xml version="1.0"?><!DOCTYPE html><!-- saved --><html><head><title>Harbour notes</title></head><body>${body}</body></html>`,
    ];
    for (const html of pages) {
      const result = extractHtmlArticle(html);
      assert.ok(result, html.slice(0, 40));
      assert.equal(result.article.title, 'Harbour notes');
      assert.equal(articleText(result.article), `Harbour notes\n${[filler, filler, filler].join('\n')}`);
    }
  });

  it('drops rows of links, date lines, bare addresses and a closing copyright line; keeps a sentence made of links', () => {
    const filler =
      'The harbour has been rebuilt many times, and each time the town argued about the cost before agreeing to pay it.';
    const linked =
      'Read the <a href="/a">council minutes</a>, the <a href="/b">engineers report</a> and the <a href="/c">budget</a>.';
    const html = `<html><head><title>Harbour notes</title></head><body><article><h1>Harbour notes</h1>
      <p>PUBLISHED: 10:48, Tue, Nov 19, 2019</p>
      <p><a href="/w">Whatsapp</a> <a href="/f">Facebook</a> <a href="/p">Pinterest</a> <a href="/d">Download</a></p>
      <p>${filler} ${filler}</p><p>${linked}</p><p>${filler}</p>
      <p>https://example.org/news/harbour-notes-2019</p>
      <p>Harbour Gazette, 1 Quay Street, Porthbay. Tel 01234 567890</p>
      <p>The contents of this site are ©2019 Harbour Gazette Ltd.</p></article></body></html>`;
    const text = articleText(extractHtmlArticle(html)!.article);
    assert.ok(text.includes('Read the council minutes, the engineers report and the budget.'), text);
    assert.doesNotMatch(text, /PUBLISHED|Whatsapp|Pinterest|https:|Quay Street|©/);
    assert.equal(text.split('\n').length, 4, text); // the title and three paragraphs
  });

  it('a saved page read as a file gives the article read by URL: the same extractor, sent as Markdown read back alike', async () => {
    const pages = [...CASES.map((c) => c.name), ...FAILURES.map((f) => f.name)];
    const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-extraction-'));
    try {
      for (const name of pages) {
        const html = readFileSync(path.join(PAGES, `${name}.html`), 'utf8');
        const byUrl = extractHtmlArticle(html, `https://example.org/${name}`)!.article;
        const file = path.join(dir, `${name}.html`);
        writeFileSync(file, html);
        const input = await readArticleInput(file);
        assert.equal(input.text, articleSource(byUrl).trim(), name);
        const fromFile = parseMarkdown(input.text);
        // Code and tables travel with their text, which is summarized, never read: compare what is read.
        const read = (blocks: Block[]) =>
          blocks.map((b) =>
            b.kind === 'code'
              ? { kind: b.kind, language: b.language, lineCount: b.lineCount }
              : b.kind === 'table'
                ? { kind: b.kind, rows: b.rows, columns: b.columns }
                : b,
          );
        assert.equal(fromFile.title, byUrl.title, name);
        assert.deepEqual(read(fromFile.blocks), read(byUrl.blocks), name);
      }
      // A page with no article fails the same way as a file, saying so.
      const links = path.join(dir, 'links.html');
      writeFileSync(links, readFileSync(path.join(PAGES, 'link-list.html')));
      await assert.rejects(
        readArticleInput(links),
        (error: unknown) => error instanceof UsageError && /has no readable article/.test(error.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('pipeline: pages fetched by URL', () => {
  let server: PageServer;
  const pipeline = createSpeechPipeline({ workers: 1 });
  before(async () => {
    const page = (name: string) => serve(readFileSync(path.join(PAGES, `${name}.html`)), 'text/html; charset=utf-8');
    server = await startPageServer({ '/links': page('link-list'), '/app': page('app-shell'), '/docs': page('docs') });
  });
  after(async () => {
    await server.close();
    await pipeline.close();
  });

  it('a documentation page by URL: read as extracted, code and table summarized in the transcript', async () => {
    const run = await runJob(pipeline, { modelId: 'article-audio-1-mini', url: server.url('/docs') });
    try {
      assert.equal(run.error, undefined, String(run.error));
      assert.equal(run.output?.title, 'Configuring the cache');
      const read = readFileSync(path.join(run.dir, 'article.md'), 'utf8');
      assert.equal(read, articleMarkdown(extract('docs')));
      // Word timestamps (`<00:00:01.234>`) taken out: the sentences as written.
      const vtt = readFileSync(path.join(run.dir, 'transcript.vtt'), 'utf8').replace(/<[\d:.]+>/g, '');
      assert.match(vtt, /^WEBVTT - Configuring the cache\n/);
      assert.match(vtt, /Here the article shows a code example in TOML, 4 lines long, which is not read aloud\./);
      assert.match(vtt, /Here the article shows a code example in Python, 1 line long/);
      assert.match(vtt, /A table of 3 rows: Setting, Default and Meaning\./);
      assert.match(vtt, /ttl_seconds: Default, 300; Meaning, How long an entry stays valid\./);
      assert.doesNotMatch(vtt, /SELECT|¶|Edit this page/);
      const chapters = JSON.parse(readFileSync(path.join(run.dir, 'chapters.json'), 'utf8')) as {
        chapters: { title: string }[];
      };
      assert.deepEqual(
        chapters.chapters.map((c) => c.title),
        ['Configuring the cache', 'How entries expire', 'Bypassing the cache', 'Clearing the cache'],
      );
    } finally {
      run.dispose();
    }
  });

  for (const [route, what] of [
    ['/links', 'a list of links'],
    ['/app', 'an app shell'],
  ] as const) {
    it(`${what} fails the job with not_an_article, before any speech is made`, async () => {
      const run = await runJob(pipeline, { modelId: 'article-audio-1-mini', url: server.url(route) });
      run.dispose();
      assert.equal(run.error?.name, 'PipelineError', String(run.error));
      assert.equal(run.error?.code, 'not_an_article');
      assert.match(run.error.message, /no readable article/);
      assert.ok(
        run.logs.some((line) => /^Fetched \d/.test(line)),
        run.logs.join('\n'),
      );
      assert.ok(!run.logs.some((line) => /Synthesizing/.test(line)));
    });
  }
});
