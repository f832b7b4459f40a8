// The podcast's script as a conversation (issue 18): short turns, hand-overs made of the article's own headings,
// topics and figures, questions answered by the other host, no line from a template more than twice, a real title
// for untitled text, and a recap of the sections. Checked on the script (text), not on audio.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { articleText } from '../../../src/speech/source/article';
import { parseMarkdown } from '../../../src/speech/source/markdown';
import { HANDOVERS } from '../../../src/speech/text/podcast';
import { type ScriptLine } from '../../../src/speech/text/profiles';
import { buildScript } from '../../../src/speech/text/script';
import { titleOf } from '../../../src/speech/text/wording';
import { words } from '../../support/speech-support';
import { escapeRegExp } from '../../support/regexp';

/** Flite's rms and slt voices speak about 150 words a minute in the podcast (measured in bench/listening.ts). */
const WORDS_PER_SECOND = 2.5;

function turns(lines: ScriptLine[]): ScriptLine[][] {
  const out: ScriptLine[][] = [];
  for (const line of lines) {
    const last = out[out.length - 1];
    if (last && last[0]!.voice === line.voice) last.push(line);
    else out.push([line]);
  }
  return out;
}

const turnSeconds = (turn: ScriptLine[]) =>
  turn.reduce((n, line) => n + words(line.spoken).length, 0) / WORDS_PER_SECOND;

const ESSAY = Array.from(
  { length: 5 },
  (_, s) => `## Part ${['one', 'two', 'three', 'four', 'five'][s]} of the harbour story

${Array.from({ length: 4 }, (_, p) => `In ${1900 + s * 10 + p} the Harbour Trust counted ${120 + s * 7 + p} boats along the quay, and the mill kept grinding through the winter. The keepers wrote down every tide, every storm and every cargo, so that the town would remember what the water gave and what it took. Their notebooks fill a whole shelf of the museum today.`).join('\n\n')}`,
).join('\n\n');

const DOCS: Record<string, string> = {
  'the README': readFileSync(path.join(__dirname, '../../../README.md'), 'utf8'),
  'ARCHITECTURE.md': readFileSync(path.join(__dirname, '../../../ARCHITECTURE.md'), 'utf8'),
  'an essay in five parts': `# The harbour\n\n${ESSAY}`,
  'untitled text without headings': Array.from(
    { length: 8 },
    (_, i) =>
      `Paragraph ${i + 1} tells of the Harbour Trust and its ${30 + i} keepers, who counted boats and tides for a century and wrote it all down in notebooks that now fill a museum shelf.`,
  ).join('\n\n'),
};

const TEMPLATES = new Set(Object.values(HANDOVERS).flat() as string[]);

describe('pipeline: the podcast is a conversation', () => {
  for (const [name, markdown] of Object.entries(DOCS)) {
    describe(name, () => {
      const article = parseMarkdown(markdown);
      const { lines } = buildScript(article, 'article-podcast-1-pro');
      const source = articleText(article).toLowerCase();

      it('turns last 25 s or less on average, and none runs past a minute and a half', () => {
        const all = turns(lines);
        const average = all.reduce((n, t) => n + turnSeconds(t), 0) / all.length;
        assert.ok(average <= 25, `average turn ${average.toFixed(1)} s over ${all.length} turns`);
        const longest = Math.max(...all.map(turnSeconds));
        assert.ok(longest <= 90, `longest turn ${longest.toFixed(0)} s`);
      });

      it('no hand-over line is used more than twice in the episode', () => {
        const counts = new Map<string, number>();
        for (const line of lines) if (line.template) counts.set(line.template, (counts.get(line.template) ?? 0) + 1);
        for (const [template, count] of counts) assert.ok(count <= 2, `${template}: ${count} times`);
      });

      it('hand-overs carry the article: each names a heading, a topic or a figure found in the text', () => {
        const handovers = lines.filter((l) => l.template && TEMPLATES.has(l.template));
        assert.ok(handovers.length >= Math.min(3, turns(lines).length / 3), `${handovers.length} hand-overs`);
        for (const line of handovers) {
          const fixed = line
            .template!.split(/\{\w\}/)
            .map((part) => part.trim())
            .filter(Boolean);
          let filled = line.written;
          for (const part of fixed) filled = filled.replace(part, ' ');
          const content = words(filled).filter((w) => w !== 'the');
          assert.ok(
            content.length > 0 && content.every((w) => source.includes(w)),
            `"${line.written}" carries nothing from the article`,
          );
        }
        // Varied: several different lines, not one template over and over.
        assert.ok(new Set(handovers.map((l) => l.template)).size >= Math.min(3, handovers.length), 'varied hand-overs');
      });

      it('every question a host asks is answered by the other host', () => {
        lines.forEach((line, i) => {
          if (!line.template || !line.written.endsWith('?')) return;
          const next = lines[i + 1];
          assert.ok(
            next && next.voice !== line.voice && !next.template,
            `"${line.written}" is not answered: ${next?.written}`,
          );
        });
      });

      it('opens with a real title and closes with a recap of the sections before goodbye', () => {
        const title = titleOf(article);
        assert.notEqual(title, 'your article');
        assert.ok(title.split(' ').length <= 10, title);
        assert.match(lines[1]!.written, new RegExp(`Today: “${escapeRegExp(title)}”`));
        const recap = lines.find((l) => l.template === 'recap')!;
        const headings = article.blocks.filter(
          (b) =>
            b.kind === 'heading' &&
            b.level === Math.min(...article.blocks.flatMap((h) => (h.kind === 'heading' ? [h.level] : []))),
        );
        for (const heading of headings.slice(0, 5))
          assert.ok(
            heading.kind === 'heading' && recap.written.includes(heading.text.replace(/^\d+\.\s*/, '')),
            `${recap.written} lacks ${JSON.stringify(heading)}`,
          );
        assert.equal(lines[lines.length - 1]!.template, 'goodbye');
        assert.equal(lines.indexOf(recap), lines.length - 2);
      });
    });
  }

  it('an untitled text takes its first heading as title, else its first sentence, shortened', () => {
    assert.equal(
      titleOf(parseMarkdown('Some words first.\n\n## Getting started with tides\n\nText here.')),
      'Getting started with tides',
    );
    assert.equal(
      titleOf(
        parseMarkdown(
          'The harbour trust counted every boat along the quay for a hundred years and more. Then it stopped.',
        ),
      ),
      'The harbour trust counted every boat along',
    );
  });
});
