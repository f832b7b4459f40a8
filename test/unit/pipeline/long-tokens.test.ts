// Text that is one long run without spaces (100,000 letters, a base64 blob, a 50,000-digit number): refused at
// submission with what to do, a page of it refused by the pipeline, and such a run inside an article said as "a long
// code" rather than spelled for minutes. Also the runs the Markdown parser was quadratic on now parse.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { createSpeechPipeline } from '../../../src/speech';
import { parseMarkdown } from '../../../src/speech/source/markdown';
import { buildScript } from '../../../src/speech/text/script';
import { toSpoken } from '../../../src/speech/text/spoken';
import { checkSubmission, textProblem } from '../../../src/protocol';
import { runJob, startPageServer } from '../../support/speech-support';

const PROSE = 'The harbour mill opened again last spring, and the whole town came to see the wheel turn once more. ';

const RUNS: Record<string, string> = {
  '100,000 letters': 'a'.repeat(100_000),
  'a base64 blob': randomBytes(60_000).toString('base64'),
  'a 50,000-digit number': '7'.repeat(50_000),
  '"_a_" repeated': '_a_'.repeat(33_333),
  '"1," repeated': '1,'.repeat(49_990),
  '"a.a.…@b"': `${'a.'.repeat(49_990)}@b`,
};

describe('long runs without spaces', () => {
  it('a text that is one run is refused at submission, saying what it is and what to do', () => {
    for (const [name, run] of Object.entries(RUNS)) {
      const checked = checkSubmission({ model_id: 'article-audio-1-pro', text: run });
      assert.equal(checked.ok, false, name);
      const message = !checked.ok ? checked.issues.find((i) => i.field === 'text')?.message : '';
      assert.match(
        message ?? '',
        /^text has nothing to read aloud: it is mostly a run of [\d,]+ characters without spaces/,
        name,
      );
      assert.match(message ?? '', /send the article's text instead/, name);
    }
    // A few words around a run do not make it readable; an article with a run in it is.
    assert.match(textProblem(`Here is the key: ${RUNS['a base64 blob']}`) ?? '', /nothing to read aloud/);
    assert.equal(textProblem(`${PROSE}The key is ${RUNS['a base64 blob']}. ${PROSE}`), undefined);
    // Long links are read ("a link to …"), and scripts written without spaces are text.
    assert.equal(textProblem(`Read it at https://example.com/${'a'.repeat(200)} today`), undefined);
    assert.equal(textProblem('東京の港で古い水車が再び回り始め、町中の人々が集まった。'.repeat(5)), undefined);
  });

  it('inside an article, a run is said as a long code or number, and the transcript shows its ends', () => {
    assert.equal(toSpoken(`The key is ${RUNS['a base64 blob']}.`), 'The key is a long code.');
    assert.equal(
      toSpoken(`The answer has ${RUNS['a 50,000-digit number']} in it.`),
      'The answer has a long number in it.',
    );
    assert.equal(toSpoken('Commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it.'), 'Commit a long code fixed it.');
    assert.equal(
      toSpoken('(see 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef)'),
      '(see a long code)',
    );
    // Words and short identifiers are untouched.
    assert.equal(toSpoken('Set the deadline to noon.'), 'Set the deadline to noon.');

    for (const [name, run] of Object.entries(RUNS)) {
      const { lines } = buildScript(parseMarkdown(`${PROSE}Then ${run} ends it.`), 'article-audio-1-pro');
      const spoken = lines.map((l) => l.spoken).join(' ');
      assert.match(spoken, /Then a long (code|number),? ends it\./, name);
      assert.ok(spoken.length < PROSE.length + 40, `${name}: ${spoken.length} characters to say`);
      // The transcript shows the run's ends around "…" (as Markdown reads them: "_a_" is emphasis).
      const written = lines.map((l) => l.written).join(' ');
      assert.ok(written.includes('…') && written.length < PROSE.length + 200, `${name}: ${written.slice(0, 300)}`);
    }
  });

  const pipeline = createSpeechPipeline({ workers: 1 });
  after(() => pipeline.close());

  it('a page that is one run fails with not_an_article and what to do, before any synthesis', async () => {
    const pages = await startPageServer({
      '/blob': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(RUNS['a base64 blob']);
      },
    });
    try {
      const run = await runJob(pipeline, { modelId: 'article-audio-1-pro', url: pages.url('/blob') });
      run.dispose();
      assert.equal(run.error?.code, 'not_an_article', run.error?.message);
      assert.match(run.error?.message ?? '', /has nothing to read aloud: it is mostly characters without spaces/);
      assert.match(run.error?.message ?? '', /Open the article itself, or paste its text/);
      assert.ok(!run.logs.some((l) => /Extracted/.test(l)), run.logs.join('\n'));
    } finally {
      await pages.close();
    }
  });
});
