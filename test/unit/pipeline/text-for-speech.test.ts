// Text for speech: sentences, the normalization tables (what the synthesizer is asked to say for numbers, dates,
// money, units, abbreviations, addresses), and each model's script (headings announced and paused, lists read as
// lists, links by their text, code and tables summarized, the podcast's two hosts); too_short for tiny text.
import * as assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parseMarkdown } from '../../../src/speech/source/markdown';
import { type ScriptLine } from '../../../src/speech/text/profiles';
import { buildScript } from '../../../src/speech/text/script';
import { splitSentences } from '../../../src/speech/text/sentences';
import { numberToWords, ordinalWords, toSpoken, yearWords } from '../../../src/speech/text/spoken';
import { createSpeechPipeline } from '../../../src/speech';
import { runJob } from '../../support/speech-support';

describe('pipeline: sentences', () => {
  const cases: [string, string[]][] = [
    ['Dr. Smith met Mr. Jones. They talked.', ['Dr. Smith met Mr. Jones.', 'They talked.']],
    ['The value is 3.14 and rising. Next comes 2.5.', ['The value is 3.14 and rising.', 'Next comes 2.5.']],
    [
      'Visit https://example.com/a.b.c?x=1.5 today. Then leave.',
      ['Visit https://example.com/a.b.c?x=1.5 today.', 'Then leave.'],
    ],
    ['Mail me at jane.doe@example.org. Thanks.', ['Mail me at jane.doe@example.org.', 'Thanks.']],
    ['J. R. R. Tolkien wrote it. It sold well.', ['J. R. R. Tolkien wrote it.', 'It sold well.']],
    ['We bought apples, pears, etc. Then we left.', ['We bought apples, pears, etc.', 'Then we left.']],
    ['See e.g. the docs, i.e. the manual. They help.', ['See e.g. the docs, i.e. the manual.', 'They help.']],
    ['It arrived at 5 p.m. He was late.', ['It arrived at 5 p.m.', 'He was late.']],
    ['Version 2.0.1 is out! Is it good? Yes.', ['Version 2.0.1 is out!', 'Is it good?', 'Yes.']],
    [
      'Approx. 5 people came. Fig. 3 shows it. No. 7 won.',
      ['Approx. 5 people came.', 'Fig. 3 shows it.', 'No. 7 won.'],
    ],
    ['The U.S. economy grew. Prices rose.', ['The U.S. economy grew.', 'Prices rose.']],
    ['“Stop,” she said. “Now.”', ['“Stop,” she said.', '“Now.”']],
  ];
  for (const [text, sentences] of cases) {
    it(`splits ${JSON.stringify(text)}`, () => assert.deepEqual(splitSentences(text), sentences));
  }

  it('cuts a run-on sentence at clause boundaries into pieces of at most 400 characters, losing no word', () => {
    const clause = 'the list goes on with another item, ';
    const text = `${clause.repeat(40)}and ends.`;
    const pieces = splitSentences(text);
    assert.ok(pieces.length >= 4, String(pieces.length));
    for (const piece of pieces) assert.ok(piece.length <= 400, String(piece.length));
    assert.equal(pieces.join(' ').replace(/\s+/g, ' '), text.replace(/\s+/g, ' ').trim());
  });
});

describe('pipeline: normalization for speech', () => {
  it('numbers: cardinals, ordinals, years, big and grouped numbers, decimals, leading zeros', () => {
    assert.equal(numberToWords(0), 'zero');
    assert.equal(numberToWords(42), 'forty-two');
    assert.equal(numberToWords(1_000_001), 'one million one');
    assert.equal(
      numberToWords('987654321012'),
      'nine hundred eighty-seven billion six hundred fifty-four million three hundred twenty-one thousand twelve',
    );
    assert.equal(ordinalWords(1), 'first');
    assert.equal(ordinalWords(22), 'twenty-second');
    assert.equal(ordinalWords(40), 'fortieth');
    assert.equal(ordinalWords(112), 'one hundred twelfth');
    assert.equal(yearWords(1990), 'nineteen ninety');
    assert.equal(yearWords(1905), 'nineteen oh five');
    assert.equal(yearWords(2000), 'two thousand');
    assert.equal(yearWords(2007), 'two thousand seven');
    assert.equal(yearWords(2024), 'twenty twenty-four');
    assert.equal(yearWords(1800), 'eighteen hundred');
  });

  const table: [string, string][] = [
    // numbers
    ['It has 1,234,567 rows.', 'It has one million two hundred thirty-four thousand five hundred sixty-seven rows.'],
    ['Pi is 3.14159.', 'Pi is three point one four one five nine.'],
    ['Call 007 now.', 'Call zero zero seven now.'],
    ['Upgraded from 2.x to 3.0.', 'Upgraded from two point x to three point zero.'],
    ['Pages 10-20.', 'Pages ten to twenty.'],
    // ordinals and years
    ['The 21st century.', 'The twenty-first century.'],
    ['She came 2nd and he 3rd.', 'She came second and he third.'],
    ['In 1990 the square was rebuilt.', 'In nineteen ninety the square was rebuilt.'],
    ['Since 2005 we have.', 'Since two thousand five we have.'],
    ["The 1990s were loud, and so were the '80s.", 'The nineteen nineties were loud, and so were the eighties.'],
    // dates and times
    ['On March 5, 2019 it rained.', 'On March fifth, twenty nineteen it rained.'],
    ['On 3 June we meet.', 'On the third of June we meet.'],
    ['It shipped on 2024-03-05.', 'It shipped on March fifth, twenty twenty-four.'],
    ['Meet at 10:30 or 9:05 am.', 'Meet at ten thirty or nine oh five A M.'],
    ['We met at 5 p.m. on Monday.', 'We met at five P M on Monday.'],
    // money and percentages
    ['It costs $3.50 today.', 'It costs three dollars and fifty cents today.'],
    ['It was $1.', 'It was one dollar.'],
    ['A £5m deal.', 'A five million pounds deal.'],
    ['€2.5 billion was spent.', 'two point five billion euros was spent.'],
    ['Growth was 4.5% last year.', 'Growth was four point five percent last year.'],
    // units
    ['Walk 12 km or 5km.', 'Walk twelve kilometers or five kilometers.'],
    ['We got 1 km.', 'We got one kilometer.'],
    ['It weighs 3.5kg.', 'It weighs three point five kilograms.'],
    ['Files of 3.5GB load in 100 ms.', 'Files of three point five gigabytes load in one hundred milliseconds.'],
    ['It was 20°C outside at 60 mph.', 'It was twenty degrees Celsius outside at sixty miles per hour.'],
    ['It is 10x faster.', 'It is ten times faster.'],
    // abbreviations, acronyms, symbols
    ['Dr. Smith met Mr. Jones at St. Paul.', 'Doctor Smith met Mister Jones at Saint Paul.'],
    ['Use e.g. a fork, i.e. cutlery etc.', 'Use for example, a fork, that is, cutlery et cetera.'],
    ['Cats vs. dogs.', 'Cats versus dogs.'],
    ['The API speaks HTTP and JSON to NASA.', 'The A P I speaks H T T P and jay son to nasa.'],
    ['C++ and C# are languages.', 'C plus plus and C sharp are languages.'],
    ['Rock & roll, A -> B.', 'Rock and roll, A to B.'],
    // addresses
    ['Visit https://www.example.com/docs/page?x=1 for more.', 'Visit a link to example dot com for more.'],
    ['See www.example-site.org/about now.', 'See a link to example dash site dot org now.'],
    ['Mail jane.doe@example.org today.', 'Mail jane dot doe at example dot org today.'],
  ];
  for (const [written, spoken] of table) {
    it(`says ${JSON.stringify(written)} as ${JSON.stringify(spoken)}`, () => assert.equal(toSpoken(written), spoken));
  }

  it('leaves no digit, URL or markup symbol in the spoken form of a busy sentence', () => {
    const spoken = toSpoken(
      'On 2024-03-05 at 14:00, Dr. Lee paid $1,250.75 (12% more) for 3 x 2.5GB at https://shop.example.com/p?id=7 — see #42 or `npm i` *now*.',
    );
    assert.doesNotMatch(spoken, /\d|https?:|[*`#<>{}[\]\\^]/, spoken);
  });
});

function script(markdown: string, model: Parameters<typeof buildScript>[1] = 'article-audio-1-mini'): ScriptLine[] {
  return buildScript(parseMarkdown(markdown), model).lines;
}

const ARTICLE = `# Field notes

An opening paragraph with a [link to the docs](https://example.com/docs/very/long/path?query=1) and a bare address
https://bare.example.org/x in it.

## Setup steps

1. Install the tool.
2. Run it.
3. Check the output.

- apples
- pears

\`\`\`js
const answer = 42;
console.log(answer);
\`\`\`

| name | size |
|------|------|
| a    | 1    |
| b    | 2    |
| c    | 3    |

> A wise quote here.

## Results

It was 5% better in 2023.
`;

describe('pipeline: the script of each model', () => {
  it('mini: the title and headings are announced with pauses around them, and open chapters', () => {
    const lines = script(ARTICLE);
    const title = lines[0]!;
    assert.equal(title.written, 'Field notes');
    assert.equal(title.spoken, 'Field notes.');
    assert.deepEqual(title.chapter, { title: 'Field notes', level: 1 });
    const heading = lines.find((l) => l.written === 'Setup steps')!;
    assert.ok(heading.pauseBefore > 0 && heading.pauseAfter > 0, JSON.stringify(heading));
    assert.deepEqual(heading.chapter, { title: 'Setup steps', level: 2 });
    const body = lines.find((l) => l.written.startsWith('An opening paragraph'))!;
    // A heading's own pause comes on top of the paragraph's before it: clearly longer silence than between paragraphs.
    assert.ok(body.pauseAfter > 0 && heading.pauseBefore >= 0.5, JSON.stringify([body, heading]));
    assert.ok(heading.pauseAfter > lines.find((l) => l.written === 'It was 5% better in 2023.')!.pauseBefore);
    assert.deepEqual(
      lines.filter((l) => l.chapter).map((l) => l.chapter!.title),
      ['Field notes', 'Setup steps', 'Results'],
    );
  });

  it('pro: sections are numbered when announced, each with a longer pause of its own before it than mini', () => {
    const pro = script(ARTICLE, 'article-audio-1-pro');
    const mini = script(ARTICLE);
    assert.equal(pro.find((l) => l.written === 'Setup steps')!.spoken, 'Section one: Setup steps.');
    assert.equal(pro.find((l) => l.written === 'Results')!.spoken, 'Section two: Results.');
    const pause = (lines: ScriptLine[]) => lines.find((l) => l.written === 'Results')!.pauseBefore;
    assert.ok(pause(pro) > pause(mini), `${pause(pro)} vs ${pause(mini)}`);
  });

  it('links are read by their text, bare addresses by their site', () => {
    const line = script(ARTICLE).find((l) => l.written.startsWith('An opening paragraph'))!;
    assert.match(line.written, /with a link to the docs and a bare address https:\/\/bare\.example\.org\/x in it\./);
    assert.doesNotMatch(line.spoken, /very|long|path|query|https/);
    assert.match(line.spoken, /a link to the docs and a bare address a link to bare dot example dot org in it\./);
  });

  it('lists are read as lists: announced with their length, numbered items said in order, pauses between items', () => {
    const lines = script(ARTICLE);
    const at = lines.findIndex((l) => l.written === 'A list of 3 items.');
    assert.ok(at > 0);
    assert.deepEqual(
      lines.slice(at + 1, at + 4).map((l) => l.spoken),
      ['First, Install the tool.', 'Second, Run it.', 'Third, Check the output.'],
    );
    assert.deepEqual(
      lines.slice(at + 4, at + 6).map((l) => l.spoken),
      ['apples', 'pears'],
    );
    assert.ok(lines.slice(at + 1, at + 5).every((l) => l.pauseAfter >= 0.2));
    // Two items are not worth announcing.
    assert.ok(!lines.some((l) => l.written === 'A list of 2 items.'));
    // Each item's end is marked for its intonation (pitch.ts): the items before the last continue, the last falls.
    assert.deepEqual(
      lines.slice(at + 1, at + 6).map((l) => l.listItem),
      ['middle', 'middle', 'last', 'middle', 'last'],
    );
  });

  it("a list item of several sentences marks only its last sentence as the item's end", () => {
    const lines = script(
      '# Notes\n\nSome text to read first, long enough for a job.\n\n- One. It has two sentences.\n- Two.\n',
    );
    const marked = lines.filter((l) => l.listItem).map((l) => [l.written, l.listItem]);
    assert.deepEqual(marked, [
      ['It has two sentences.', 'middle'],
      ['Two.', 'last'],
    ]);
    assert.equal(lines.find((l) => l.written === 'One.')!.listItem, undefined);
  });

  it('code blocks are summarized, not spelled out; a small table is read row by row', () => {
    const lines = script(ARTICLE);
    const spoken = lines.map((l) => l.spoken).join(' ');
    assert.match(
      spoken,
      /Here the article shows a code example in java ?script, two lines long, which is not read aloud\./i,
    );
    assert.doesNotMatch(spoken, /answer|console|forty-two/);
    const at = lines.findIndex((l) => l.written === 'A table of 3 rows: name and size.');
    assert.ok(at > 0, lines.map((l) => l.written).join('\n'));
    assert.deepEqual(
      lines.slice(at + 1, at + 4).map((l) => l.written),
      ['a: size, 1.', 'b: size, 2.', 'c: size, 3.'],
    );
  });

  it('quotes are marked as quotes', () => {
    const lines = script(ARTICLE).map((l) => l.spoken);
    const at = lines.indexOf('A wise quote here.');
    assert.deepEqual(lines.slice(at - 1, at + 2), ['Quote:', 'A wise quote here.', 'End of quote.']);
  });

  it('transcript lines keep the written form; the synthesizer gets the spoken one', () => {
    const line = script(ARTICLE).find((l) => l.written === 'It was 5% better in 2023.')!;
    assert.equal(line.spoken, 'It was five percent better in twenty twenty-three.');
  });

  it('podcast: two hosts greet with the title, share the sections with hand-overs, and sign off', () => {
    const { lines, profile } = buildScript(parseMarkdown(ARTICLE), 'article-podcast-1-pro');
    assert.deepEqual(
      profile.voices.map((v) => v.name),
      ['Alex', 'Sam'],
    );
    assert.match(lines[0]!.written, /^Hello, and welcome to Article Audio\. I'm Alex\.$/);
    assert.equal(lines[0]!.voice, 0);
    assert.match(lines[1]!.written, /^And I'm Sam\. Today: “Field notes”\.$/);
    assert.equal(lines[1]!.voice, 1);
    const handOver = lines.findIndex((l) => l.chapter?.title === 'Setup steps');
    assert.ok(handOver > 0);
    assert.match(lines[handOver]!.written, /Setup steps/);
    assert.notEqual(lines[handOver + 1]!.voice, lines[handOver]!.voice, 'the other host answers and reads the section');
    const last = lines.slice(-2);
    assert.match(last[0]!.written, /^That was “Field notes”\. We covered Setup steps and Results\.$/);
    assert.match(last[1]!.written, /goodbye!$/);
    assert.notEqual(last[0]!.voice, last[1]!.voice);
    // Both hosts speak a fair share.
    const share = lines.filter((l) => l.voice === 1).length / lines.length;
    assert.ok(share > 0.3 && share < 0.7, String(share));
  });

  it('podcast without headings: hosts still take turns every paragraph or two', () => {
    const text = Array.from(
      { length: 9 },
      (_, i) =>
        `Paragraph ${i + 1} says something worth hearing about the topic, and then it says a little more so that it is a real paragraph of some length.`,
    ).join('\n\n');
    const lines = buildScript(parseMarkdown(text), 'article-podcast-1-pro').lines;
    const body = lines.filter((l) => l.written.startsWith('Paragraph'));
    assert.deepEqual([...new Set(body.map((l) => l.voice))].sort(), [0, 1]);
    let switches = 0;
    for (let i = 1; i < body.length; i++) if (body[i]!.voice !== body[i - 1]!.voice) switches++;
    assert.ok(switches >= 3, String(switches));
  });
});

describe('pipeline: text too short or too long to read', () => {
  const pipeline = createSpeechPipeline({ workers: 1 });
  after(() => pipeline.close());

  it('fails with too_short when fewer than 50 characters remain once the markup is gone', async () => {
    // 60 characters of input, but most of it is markup and a code block that is not read.
    const run = await runJob(pipeline, {
      modelId: 'article-audio-1-mini',
      text: '# Hi\n\n```\nconst x = 1; const y = 2; const z = 3;\n```\n\n**Ok.**',
    });
    run.dispose();
    assert.equal(run.error?.code, 'too_short', String(run.error));
    assert.match(run.error.message, /only \d+ characters/);
    assert.deepEqual(
      run.progress.filter((p) => p > 0.01),
      [],
      'no work was reported',
    );
  });

  it('fails with too_long above 100,000 characters of readable text, before any speech is made', async () => {
    const paragraph = 'A sentence about the harbour and the mill, long enough to count. '.repeat(20);
    const text = Array.from({ length: 80 }, () => paragraph).join('\n\n');
    assert.ok(text.length > 100_000);
    const run = await runJob(pipeline, { modelId: 'article-audio-1-mini', text });
    run.dispose();
    assert.equal(run.error?.code, 'too_long', String(run.error));
    assert.match(run.error.message, /the limit is 100,000/);
    assert.ok(!run.logs.some((line) => line.startsWith('Synthesizing')));
  });
});
