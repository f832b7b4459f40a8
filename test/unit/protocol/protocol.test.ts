// The wire contract in src/protocol: the places that cannot import it (package.json's settings) name the same models,
// and every way the project counts characters is the one in src/protocol.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { MODEL_IDS, countCharacters, textProblem } from '../../../src/protocol';

const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, { enum?: string[]; enumDescriptions?: string[] }> } };
};

describe('protocol', () => {
  it("package.json's articleAudio.model setting offers exactly the protocol's models, plus ask", () => {
    const setting = manifest.contributes.configuration.properties['articleAudio.model']!;
    assert.deepEqual(setting.enum, ['ask', ...MODEL_IDS]);
    assert.equal(setting.enumDescriptions?.length, setting.enum.length);
  });

  it('counts code points, leaving out spaces at either end and invisible characters', () => {
    assert.equal(countCharacters('😀😀'), 2);
    assert.equal(countCharacters('  a b \n'), 3);
    assert.equal(countCharacters('a\u0000\u200b\u200d\ufeff\u202eb'), 2);
    assert.equal(countCharacters('a\tb\nc'), 5, 'tabs and line breaks inside count');
    assert.equal(countCharacters('e\u0301'), 2, 'a combining accent is its own code point');
  });

  it('refuses text with nothing to read, whatever its length', () => {
    assert.match(textProblem('😀'.repeat(60)) ?? '', /nothing to read aloud/);
    assert.match(textProblem('.'.repeat(60)) ?? '', /nothing to read aloud/);
    assert.equal(textProblem(`1${'😀'.repeat(60)}`), undefined);
    assert.match(textProblem('\u0000'.repeat(60)) ?? '', /\(it has 0\)/);
  });
});
