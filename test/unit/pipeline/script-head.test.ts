// A long article's script comes in two steps from the parse worker (issue 14: speech starts on the first lines while
// the rest is built); the first lines must be exactly those the whole script begins with.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Article } from '../../../src/speech/source/article';
import type { ScriptHead } from '../../../src/speech/parse/parse-protocol';
import { ParseRunner } from '../../../src/speech/parse/parse-runner';
import { type ArticleFacts, articleFacts } from '../../../src/speech/text/article-facts';
import type { EngineModelId } from '../../../src/speech/types';

const LONG = readFileSync(path.join(__dirname, '../../fixtures/articles/long.md'), 'utf8');
const SHORT = readFileSync(path.join(__dirname, '../../fixtures/articles/short.md'), 'utf8');
const MODELS: EngineModelId[] = ['article-audio-1-mini', 'article-audio-1-pro', 'article-podcast-1-pro'];

async function read(text: string, modelId: EngineModelId) {
  const heads: { article: Article; head: ScriptHead; facts: ArticleFacts }[] = [];
  const read = await new ParseRunner().readText(text, 'The text', new AbortController().signal, {
    modelId,
    onHead: (article, head, facts) => heads.push({ article, head, facts }),
  });
  return { ...read, heads };
}

describe('the script of a long article, head first', () => {
  for (const modelId of MODELS) {
    it(`${modelId}: sends the first lines ahead, and the whole script begins with them`, async () => {
      const { article, script, heads } = await read(LONG, modelId);
      assert.equal(heads.length, 1, 'one head for a long article');
      const { head, article: headArticle } = heads[0]!;
      assert.deepEqual(headArticle, article, 'the head comes with the whole article');
      assert.ok(script, 'the whole script');
      assert.ok(head.lines.length >= 10 && head.lines.length < script.lines.length / 10, `${head.lines.length} lines`);
      assert.deepEqual(head.profile, script.profile);
      for (const [i, line] of head.lines.entries()) {
        const { chapter: _a, section: _b, ...speech } = line;
        const { chapter: _c, section: _d, ...wholeSpeech } = script.lines[i]!;
        assert.deepEqual(speech, wholeSpeech, `line ${i}`);
      }
    });
  }

  it('sends no head for a short article: its whole script is as quick', async () => {
    const { script, heads } = await read(SHORT, 'article-audio-1-pro');
    assert.equal(heads.length, 0);
    assert.ok(script && script.lines.length > 5);
  });

  it('builds no script, and sends no head, when no model is given', async () => {
    let heads = 0;
    const { article, script } = await new ParseRunner().readText(LONG, 'The text', new AbortController().signal, {
      onHead: () => heads++,
    });
    assert.ok(article.blocks.length > 100);
    assert.equal(script, undefined);
    assert.equal(heads, 0);
  });

  // Issue 30: the checks before speech (length, readable text, words, language) were passes over the whole text on the
  // engine's main thread, its longest stall as a long job started; the parse worker now sends them with the article.
  it('sends the facts the pipeline checks with the article and with the head, as the main thread would find them', async () => {
    const { article, facts, heads } = await read(LONG, 'article-audio-1-pro');
    assert.ok(facts, 'the facts come with the article');
    assert.deepEqual(facts, articleFacts(article));
    assert.ok(facts.characters > 90_000 && facts.words > 10_000, JSON.stringify(facts));
    assert.equal(facts.language.language?.iso639_3, 'eng');
    assert.deepEqual(heads[0]?.facts, facts, 'the head carries the same facts');
  });

  it('tells the language of an article in another language in the worker', async () => {
    const german = readFileSync(path.join(__dirname, '../../engine/fixtures/languages/de.md'), 'utf8');
    const { facts } = await read(german, 'article-audio-1-mini');
    assert.equal(facts?.language.language?.iso639_3, 'deu');
  });

  it('sends the facts of a text too short for a job (the pipeline says why it refuses it), without a script', async () => {
    const { facts, script } = await read('Too short to read.', 'article-audio-1-mini');
    assert.equal(script, undefined);
    assert.equal(facts?.characters, 'Too short to read.'.length);
  });
});
