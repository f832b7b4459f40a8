// What `article-audio convert` sends for each kind of input: a web address as url; a file, stdin or a saved HTML
// page as text (the article found by Readability, as Markdown-style text with its title and headings).
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { htmlToText, readArticleInput } from '../../../src/cli/article-input';
import { UsageError } from '../../../src/engine/settings';

const fixtures = path.join(__dirname, '..', '..', 'engine', 'fixtures');

describe('cli: article input', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'aa-cli-input-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the article of an HTML page with its title and headings, without navigation, byline or footer', () => {
    const text = htmlToText(readFileSync(path.join(fixtures, 'article.html'), 'utf8'));
    const blocks = text.split('\n\n');
    assert.equal(blocks[0], '# The River Town');
    assert.ok(blocks.includes('## Morning'));
    assert.ok(blocks.includes('## Evening'));
    assert.ok(text.includes('The river town woke early.'));
    assert.ok(text.includes('In 1990 the square was rebuilt'));
    for (const noise of ['Subscribe', 'Copyright', 'Home', 'Example Magazine'])
      assert.ok(!text.includes(noise), `kept "${noise}"`);
  });

  it('sends URLs as url, files and stdin as text, and names outputs after the input', async () => {
    const page = await readArticleInput('https://example.com/blog/My%20Post.html?x=1');
    assert.deepEqual(page, {
      url: 'https://example.com/blog/My%20Post.html?x=1',
      suggestedName: 'My-Post',
      label: 'https://example.com/blog/My%20Post.html?x=1',
    });
    assert.equal((await readArticleInput('https://example.com/')).suggestedName, 'example.com');

    const markdown = path.join(fixtures, 'article.md');
    const file = await readArticleInput(markdown);
    assert.equal(file.text, readFileSync(markdown, 'utf8').trim());
    assert.equal(file.suggestedName, 'article');

    const html = path.join(dir, 'saved page.htm');
    writeFileSync(html, readFileSync(path.join(fixtures, 'article.html')));
    const saved = await readArticleInput(html);
    assert.ok(saved.text?.startsWith('# The River Town\n\n'));
    assert.equal(saved.suggestedName, 'saved page');

    const piped = await readArticleInput(
      '-',
      Readable.from([Buffer.from('  Piped text that is long enough to be converted into audio.  ')]),
    );
    assert.equal(piped.text, 'Piped text that is long enough to be converted into audio.');
    assert.equal(piped.suggestedName, 'article');
  });

  it('refuses what cannot be converted, saying why', async () => {
    const tiny = path.join(dir, 'tiny.txt');
    writeFileSync(tiny, 'short');
    const cases: [string, RegExp][] = [
      [path.join(dir, 'absent.md'), /No such file/],
      [dir, /is not a file/],
      [tiny, /has 5 characters of text; an article needs at least 50/],
      ['ftp://example.com/x', /Only http:\/\/ and https:\/\//],
    ];
    for (const [source, message] of cases) {
      await assert.rejects(
        readArticleInput(source),
        (error: unknown) => error instanceof UsageError && message.test(error.message),
        source,
      );
    }
    const huge = path.join(dir, 'huge.txt');
    writeFileSync(huge, 'word '.repeat(25_000));
    await assert.rejects(readArticleInput(huge), /takes at most 100000/);
  });
});
