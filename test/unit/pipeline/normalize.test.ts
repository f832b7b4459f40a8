// Technical and numeric text for speech (issue 18): every case a listener heard misread, as a table of written ->
// spoken. The transcript keeps the written form (checked in text-for-speech.test.ts); these are what Flite is asked
// to say.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseMarkdown } from '../../../src/speech/source/markdown';
import { buildScript } from '../../../src/speech/text/script';
import { toSpoken } from '../../../src/speech/text/spoken';

const CASES: Record<string, [string, string][]> = {
  versions: [
    ['Install v1.2.3 today.', 'Install version one point two point three today.'],
    ['We need Node v20.10.0 or later.', 'We need Node version twenty point ten point zero or later.'],
    ['Python 3.12.1 is out.', 'Python three point twelve point one is out.'],
    ['Python 3.12 is out.', 'Python three point twelve is out.'],
    ['Ship 1.0.0-rc.2 first.', 'Ship one point zero point zero release candidate two first.'],
    ['It is 3.14 today.', 'It is three point one four today.'],
    ['Listen on 127.0.0.1 only.', 'Listen on one hundred twenty-seven dot zero dot zero dot one only.'],
  ],
  identifiers: [
    ['Set remoteTimeoutMs to 500.', 'Set remote timeout milliseconds to five hundred.'],
    ['CommonJS modules load.', 'common J S modules load.'],
    ['MAX_RETRIES is 3.', 'max retries is three.'],
    ['Call parse_json_file now.', 'Call parse jay son file now.'],
    ['Use XMLHttpRequest here.', 'Use X M L H T T P request here.'],
    ['The userId field.', 'The user I D field.'],
    ['Build for arm64 or x86.', 'Build for arm sixty-four or X eighty-six.'],
    ['Mr. McDonald came.', 'Mister McDonald came.'],
  ],
  acronyms: [
    ['Parse the JSON.', 'Parse the jay son.'],
    ['Query with SQL.', 'Query with sequel.'],
    ['NASA flew.', 'nasa flew.'],
    ['Speak HTTP and the API.', 'Speak H T T P and the A P I.'],
    ['Read the FAQ and the README.', 'Read the fack and the read me.'],
    ['Three APIs.', "Three A P I's."],
    ['This is IMPORTANT.', 'This is important.'],
  ],
  'paths and files': [
    ['The cache lives in ~/.cache/build; clear it.', 'The cache lives in tilde slash dot cache slash build; clear it.'],
    ['Edit ./src/index.ts now.', 'Edit dot slash src slash index dot T S now.'],
    ['It is in /usr/local/bin today.', 'It is in slash usr slash local slash bin today.'],
    ['Check the folder of git.exe.', 'Check the folder of git dot E X E.'],
    ['Open package.json and README.md.', 'Open package dot jay son and read me dot M D.'],
    ['Read it and/or skip it.', 'Read it and slash or skip it.'],
  ],
  'codes and commands': [
    ['It fails with ENOENT, then EACCES.', 'It fails with E no ent, then E access.'],
    ['The server answers with a 503 error.', 'The server answers with a five oh three error.'],
    ['A 500 error and a 301 redirect.', 'A five hundred error and a three oh one redirect.'],
    ['HTTP 404 means gone; status 200 is fine.', 'H T T P four oh four means gone; status two hundred is fine.'],
    ['We had 503 guests.', 'We had five hundred three guests.'],
    ['Run npm ci, then systemctl and openssl.', 'Run N P M C I, then system C T L and open S S L.'],
    ['About 1/3.', 'About one third.'],
  ],
  packages: [
    [
      'Run npm i @types/node@20.11.5 now.',
      'Run N P M i at types slash node, version twenty point eleven point five now.',
    ],
    ['Pin lodash@4.17.21 today.', 'Pin lodash, version four point seventeen point twenty-one today.'],
    ['Import @scope/pkg first.', 'Import at scope slash pkg first.'],
  ],
  names: [
    ['Run k8s clusters.', 'Run kubernetes clusters.'],
    ['It has i18n and a11y.', 'It has internationalization and accessibility.'],
    ['Written for Node.js users.', 'Written for node jay ess users.'],
    ['Open 24/7.', 'Open twenty-four seven.'],
  ],
  'Roman numerals': [
    ['World War II ended.', 'World War two ended.'],
    ['Henry VIII had six wives.', 'Henry the eighth had six wives.'],
    ['Louis XIV built it.', 'Louis the fourteenth built it.'],
    ['After World War I came peace.', 'After World War one came peace.'],
    ['Read Part IV first.', 'Read Part four first.'],
    ['Then I left, and I know it.', 'Then I left, and I know it.'],
    ['Ask Tom I said.', 'Ask Tom I said.'],
  ],
  'signs and operators': [
    ['It was -5°C.', 'It was minus five degrees Celsius.'],
    ['Values of 50 ± 2 units.', 'Values of fifty plus or minus two units.'],
    ['Compute x^2 and y^3 and 2^10.', 'Compute x squared and y cubed and two to the power of ten.'],
    ['Then 5 * 3 is fifteen.', 'Then five times three is fifteen.'],
    ['And 4 × 2 is eight.', 'And four times two is eight.'],
    ['So 10 / 2 is five.', 'So ten divided by two is five.'],
    ['Check a != b.', 'Check a is not equal to b.'],
    ['It rose +3% today.', 'It rose plus three percent today.'],
  ],
  fractions: [
    ['About 1/3 of them.', 'About one third of them.'],
    ['Nearly 3/4 agreed.', 'Nearly three quarters agreed.'],
    ['Add 1/2 a cup.', 'Add one half a cup.'],
    ['Only 2/3 stayed.', 'Only two thirds stayed.'],
    ['We are open 24/7.', 'We are open twenty-four seven.'],
  ],
  ranges: [
    ['It costs $5-10.', 'It costs five to ten dollars.'],
    ['From 2010-2015 it grew.', 'From twenty ten to twenty fifteen it grew.'],
    ['In 2010–15 it grew.', 'In twenty ten to twenty fifteen it grew.'],
    ['Growth of 5-10% a year.', 'Growth of five to ten percent a year.'],
    ['Pages 10-20.', 'Pages ten to twenty.'],
  ],
  money: [
    ['It raised US$1.9 billion.', 'It raised one point nine billion U S dollars.'],
    ['A fee of USD 5 applies.', 'A fee of five U S dollars applies.'],
    ['It cost 20 EUR.', 'It cost twenty euros.'],
    ['It costs $3.50 today.', 'It costs three dollars and fifty cents today.'],
  ],
  'phone numbers': [
    ['Call +1 (555) 123-4567 now.', 'Call plus one, five five five, one two three, four five six seven now.'],
    ['Call 555-123-4567 now.', 'Call five five five, one two three, four five six seven now.'],
    ['Call (555) 123-4567 now.', 'Call five five five, one two three, four five six seven now.'],
    ['Ring +44 20 7946 0958 today.', 'Ring plus four four, two zero, seven nine four six, zero nine five eight today.'],
  ],
  'footnote markers': [
    ['This is true.[1] And more.', 'This is true. And more.'],
    ['It grew[^2] fast.', 'It grew fast.'],
    ['A claim¹ here.', 'A claim here.'],
  ],
  pauses: [
    ['Wait — really?', 'Wait, really?'],
    ['Yes – no.', 'Yes, no.'],
    ['And then… nothing.', 'And then, nothing.'],
    ['It trailed off...', 'It trailed off.'],
  ],
};

describe('pipeline: technical and numeric text for speech', () => {
  for (const [group, cases] of Object.entries(CASES)) {
    describe(group, () => {
      for (const [written, spoken] of cases) {
        it(`says ${JSON.stringify(written)} as ${JSON.stringify(spoken)}`, () =>
          assert.equal(toSpoken(written), spoken));
      }
    });
  }
});

describe('pipeline: numbered headings and footnotes in the script', () => {
  const markdown = `# Guide

## 1. Introduction

It starts here, as noted.[^1]

## 2.3 Results

It ends here.

[^1]: The first footnote text, which belongs at the end.
`;

  it('"## 1. Introduction" is said "Section one: Introduction", not "one: one", in every model', () => {
    for (const model of ['article-audio-1-mini', 'article-audio-1-pro', 'article-podcast-1-pro'] as const) {
      const lines = buildScript(parseMarkdown(markdown), model).lines;
      const heading = lines.find((l) => l.written === '1. Introduction');
      if (model === 'article-podcast-1-pro') {
        // The show names the part in a question instead of reading the heading.
        const ask = lines.find((l) => l.chapter?.title === '1. Introduction')!;
        assert.match(ask.spoken, /Introduction/);
        assert.doesNotMatch(ask.spoken, /\bone\b/);
      } else {
        assert.equal(heading?.spoken, 'Section one: Introduction.', model);
        assert.equal(
          lines.find((l) => l.written === '2.3 Results')?.spoken,
          'Section two point three: Results.',
          model,
        );
      }
    }
  });

  it('footnote markers are not read, and the footnote text comes after the article, not in the middle', () => {
    const lines = buildScript(parseMarkdown(markdown), 'article-audio-1-pro').lines;
    const note = lines.findIndex((l) => l.written.startsWith('The first footnote text'));
    const end = lines.findIndex((l) => l.written === 'It ends here.');
    assert.ok(note > end && end > 0, lines.map((l) => l.written).join('\n'));
    assert.equal(lines[note - 1]!.written, 'Notes');
    assert.ok(!lines.some((l) => /\^|\[\d\]/.test(l.spoken)));
    assert.equal(lines.find((l) => l.written.startsWith('It starts here'))!.spoken, 'It starts here, as noted.');
  });
});
