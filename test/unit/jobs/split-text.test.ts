import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countCodePoints, splitText } from '../../../src/jobs/split-text';

const words = (text: string) => text.split(/\s+/).filter(Boolean);

describe('splitText (convert in parts)', () => {
  it('keeps a text under the limit whole', () => {
    assert.deepEqual(splitText('  Short text.  ', 100), [{ text: 'Short text.', index: 1 }]);
  });

  it('cuts at headings first, and every part fits', () => {
    const section = (n: number) => `## Section ${n}\n\n${'A sentence of the section. '.repeat(30).trim()}\n\nMore.`;
    const text = `# Title\n\n${[1, 2, 3, 4, 5, 6].map(section).join('\n\n')}`;
    const parts = splitText(text, 2000);
    assert.ok(parts.length >= 2);
    for (const part of parts)
      assert.ok(countCodePoints(part.text) <= 2000, `part ${part.index} has ${countCodePoints(part.text)} characters`);
    for (const part of parts.slice(1)) assert.match(part.text, /^## Section \d/, 'a later part starts at a heading');
    assert.deepEqual(
      words(parts.map((p) => p.text).join(' ')),
      words(text),
      'nothing lost, nothing repeated, in order',
    );
    assert.deepEqual(
      parts.map((p) => p.index),
      parts.map((_, i) => i + 1),
    );
  });

  it('cuts between paragraphs when there are no headings, then between sentences', () => {
    const paragraph = 'One sentence here. Another sentence there. '.repeat(10).trim();
    const text = Array.from({ length: 12 }, () => paragraph).join('\n\n');
    const parts = splitText(text, 1500);
    for (const part of parts) {
      assert.ok(countCodePoints(part.text) <= 1500);
      assert.match(part.text, /\.$/, 'ends at the end of a sentence');
    }
    assert.deepEqual(words(parts.map((p) => p.text).join(' ')), words(text));
    const oneParagraph = 'Sentence number one is here. '.repeat(200).trim();
    for (const part of splitText(oneParagraph, 1000)) assert.match(part.text, /^Sentence number one is here\..*\.$/s);
  });

  it('counts code points: 300 emoji fit a limit of 300, and no surrogate pair is split', () => {
    assert.equal(splitText('😀'.repeat(300), 300).length, 1);
    const parts = splitText('😀'.repeat(1000), 300);
    const sizes = parts.map((p) => countCodePoints(p.text));
    assert.equal(sizes.length, 4, 'as few parts as fit');
    assert.equal(
      sizes.reduce((a, b) => a + b),
      1000,
    );
    assert.ok(
      sizes.every((n) => n <= 300 && n >= 120),
      `parts of about equal length: ${sizes.join(', ')}`,
    );
    assert.ok(parts.every((p) => !/[\uD800-\uDBFF]$|^[\uDC00-\uDFFF]/.test(p.text)));
  });

  it('cuts a text with no spaces at all hard, at the limit', () => {
    const sizes = splitText('x'.repeat(2500), 1000).map((p) => p.text.length);
    assert.equal(sizes.length, 3);
    assert.equal(
      sizes.reduce((a, b) => a + b),
      2500,
    );
    assert.ok(
      sizes.every((n) => n <= 1000 && n >= 400),
      sizes.join(', '),
    );
  });

  it('never leaves a scrap: 100,001 characters make two parts of about half each', () => {
    const text = 'Word and word. '.repeat(6667).slice(0, 100_001);
    const parts = splitText(text, 100_000);
    assert.equal(parts.length, 2);
    for (const part of parts)
      assert.ok(countCodePoints(part.text) > 40_000, `part ${part.index}: ${countCodePoints(part.text)}`);
  });

  it('works with another way of counting', () => {
    const utf16 = (s: string) => s.length;
    const parts = splitText('😀 '.repeat(100), 50, utf16);
    for (const part of parts) assert.ok(part.text.length <= 50);
  });
});
