// The player's transcript and chapter parsing, against what the engine writes (its own toWebVtt/toChaptersJson)
// and against hand-written files with the WebVTT features other services use.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shiftCue, toChaptersJson, toWebVtt } from '../../../src/speech/audio/transcript';
import {
  MAX_CUE_WORDS,
  cueText,
  formatTime,
  indexAt,
  nextChangeAt,
  laterCue,
  parseChapters,
  parseTimestamp,
  parseWebVtt,
  spokenTime,
} from '../../../src/webview/transcript';

describe('player: WebVTT transcript', () => {
  it('reads back what the engine writes, speakers and escaped characters included', () => {
    const written = [
      { start: 0, end: 4.406, text: "Hello, and welcome to Article Audio. I'm Alex.", voice: 'Alex' },
      { start: 4.756, end: 7.701, text: 'And I\'m Sam. Today: "A < B & C > D".', voice: 'Sam' },
      { start: 8.051, end: 9.522, text: 'Costs rose 5% in 1990 -> 2000.' },
      { start: 3723.5, end: 3725.25, text: 'An hour later,\nstill talking.' },
    ];
    const cues = parseWebVtt(toWebVtt(written, 'A title --> with arrow'));
    assert.deepEqual(cues, [
      { start: 0, end: 4.406, text: "Hello, and welcome to Article Audio. I'm Alex.", speaker: 'Alex' },
      { start: 4.756, end: 7.701, text: 'And I\'m Sam. Today: "A < B & C > D".', speaker: 'Sam' },
      { start: 8.051, end: 9.522, text: 'Costs rose 5% in 1990 -> 2000.' },
      { start: 3723.5, end: 3725.25, text: 'An hour later, still talking.' },
    ]);
  });

  it('carries the paragraphs of the text: the engine marks the cues that start one, the player reads the marks', () => {
    const written = [
      { start: 0, end: 1, text: 'First paragraph, first sentence.', paragraph: true },
      { start: 1.1, end: 2, text: 'First paragraph, second sentence.' },
      { start: 2.1, end: 3, text: 'Second paragraph, after a short pause.', paragraph: true },
      { start: 3.1, end: 4, text: 'Still the second.' },
    ];
    const vtt = toWebVtt(written);
    assert.equal(vtt.match(/^NOTE paragraph$/gm)?.length, 2);
    assert.deepEqual(
      parseWebVtt(vtt).map((cue) => cue.paragraph === true),
      [true, false, true, false],
    );
    // A NOTE that says something else marks nothing.
    assert.deepEqual(
      parseWebVtt('WEBVTT\n\nNOTE paragraphs are nice\n\n00:00.000 --> 00:01.000\nHi.\n').map((cue) => cue.paragraph),
      [undefined],
    );
  });

  it('says who read it in a NOTE the player skips, even when a voices file names a voice with "-->" in it', () => {
    const written = [
      { start: 0, end: 1, text: 'First sentence.', paragraph: true },
      { start: 1.1, end: 2, text: 'Second sentence.' },
    ];
    const hostile = 'the voice x\n\n00:00:05.000 --> 00:00:06.000\nNot a cue (kokoro at 127.0.0.1:8880)';
    const vtt = toWebVtt(written, 'Title', ['the built-in voice rms (Flite)', hostile]);
    const notes = vtt.split('\n\n').filter((block) => block.startsWith('NOTE voice: '));
    assert.deepEqual(notes, [
      'NOTE voice: the built-in voice rms (Flite) and the voice x 00:00:05.000 → 00:00:06.000 Not a cue (kokoro at 127.0.0.1:8880)',
    ]);
    assert.ok(vtt.startsWith(`WEBVTT - Title\n\n${notes[0]}\n\n`), 'the NOTE follows the header');
    assert.deepEqual(parseWebVtt(vtt), parseWebVtt(toWebVtt(written, 'Title')));
    assert.deepEqual(
      parseWebVtt(vtt).map((cue) => [cue.text, cue.paragraph === true]),
      [
        ['First sentence.', true],
        ['Second sentence.', false],
      ],
    );
  });

  it('accepts CRLF, a BOM, cue settings, NOTE blocks, short timestamps and inline tags; skips broken blocks', () => {
    const source = [
      '\uFEFFWEBVTT',
      '',
      'NOTE made by hand',
      'over two lines',
      '',
      'STYLE',
      '::cue { color: red }',
      '',
      'intro',
      '00:01.500 --> 00:03.000 align:start position:10%',
      '<v.loud Sam Smith>Hi <i>there</i>, <c.x>friend</c>.',
      '',
      '00:03.000 --> 00:04.000',
      '<00:03.100>Karaoke <00:03.500>style&nbsp;text &#x263A; &#65;',
      '',
      'no timing here',
      'just text',
      '',
      '00:00:05.000 --> nonsense',
      'broken timing',
      '',
      '00:00:06.000 --> 00:00:07.000',
      '',
      '',
      '00:00:00.500 --> 00:00:01.000',
      'out of order',
    ].join('\r\n');
    const cues = parseWebVtt(source);
    assert.deepEqual(cues, [
      { start: 0.5, end: 1, text: 'out of order' },
      { start: 1.5, end: 3, text: 'Hi there, friend.', speaker: 'Sam Smith' },
      // &nbsp; becomes a plain space: layout is the page's job. The word timestamps cut the text into its words.
      {
        start: 3,
        end: 4,
        text: 'Karaoke style text ☺ A',
        words: [
          { text: 'Karaoke ', start: 3 },
          { text: 'style text ☺ A', start: 3.5 },
        ],
      },
    ]);
  });

  it('returns no cues, without throwing, for empty or foreign input', () => {
    assert.deepEqual(parseWebVtt(''), []);
    assert.deepEqual(parseWebVtt('WEBVTT\n'), []);
    assert.deepEqual(parseWebVtt('{"not": "vtt"}'), []);
  });

  it('parses timestamps and cue payloads', () => {
    assert.equal(parseTimestamp('01:02:03.450'), 3723.45);
    assert.equal(parseTimestamp('02:03.4'), 123.4);
    assert.equal(parseTimestamp('00:00:01,250'), 1.25);
    assert.ok(Number.isNaN(parseTimestamp('1.5')));
    assert.deepEqual(cueText('<v Alex>One &amp; two'), { text: 'One & two', speaker: 'Alex' });
    assert.deepEqual(cueText('&bogus; &lt;b&gt;'), { text: '&bogus; <b>' });
  });
});

describe('player: word timestamps in the transcript (issue 26)', () => {
  it('reads back the word timings the engine writes, in the job transcript and shifted into a part', () => {
    const cue = {
      start: 10,
      end: 12.5,
      text: 'It cost $4.50 & <more>.',
      words: [
        { text: 'It', start: 10.02 },
        { text: 'cost', start: 10.3 },
        { text: '$4.50' }, // untimed: it joins the word before it
        { text: '&', start: 11.2 },
        { text: '<more>.', start: 11.6 },
      ],
    };
    const vtt = toWebVtt([cue]);
    assert.match(vtt, /\nIt <00:00:10\.300>cost \$4\.50 <00:00:11\.200>&amp; <00:00:11\.600>&lt;more&gt;\.\n/);
    const [read] = parseWebVtt(vtt);
    assert.deepEqual(read, {
      start: 10,
      end: 12.5,
      text: 'It cost $4.50 & <more>.',
      words: [
        { text: 'It ', start: 10 },
        { text: 'cost $4.50 ', start: 10.3 },
        { text: '& ', start: 11.2 },
        { text: '<more>.', start: 11.6 },
      ],
    });
    // A part's transcript is timed from the part's start.
    const [inPart] = parseWebVtt(toWebVtt([shiftCue(cue, 9.5)]));
    assert.deepEqual(
      inPart?.words?.map((w) => w.start),
      [0.5, 0.8, 1.7, 2.1].map((s) => Number(s.toFixed(3))),
    );
    assert.deepEqual(laterCue(inPart, 9.5).words, read.words);
  });

  it('writes only strictly increasing timestamps inside the cue, and plain text without word timings', () => {
    const vtt = toWebVtt([
      {
        start: 1,
        end: 3,
        text: 'a b c d e f',
        words: [
          { text: 'a', start: 1 },
          { text: 'b', start: 1 }, // not after the cue's start
          { text: 'c', start: 2 },
          { text: 'd', start: 1.5 }, // before the word before it
          { text: 'e', start: 2.0004 }, // the same millisecond as c
          { text: 'f', start: 3 }, // at the cue's end
        ],
      },
      { start: 4, end: 5, text: 'No words here.' },
    ]);
    assert.match(vtt, /\na b <00:00:02\.000>c d e f\n/);
    assert.match(vtt, /\nNo words here\.\n/);
  });

  it('ignores hostile timestamps: out of order, outside the cue, malformed, far too many; other tags stripped', () => {
    const many = Array.from(
      { length: MAX_CUE_WORDS + 5 },
      (_, i) => `<00:00:${String(10 + Math.floor(i / 1000)).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}>w`,
    ).join(' ');
    const source = [
      'WEBVTT',
      '',
      '00:00:01.000 --> 00:00:05.000',
      '<v Eve>one <00:00:02.000>two <00:00:01.500>three <00:00:00.500>four <00:00:09.000>five <00:00:03.000><b>six</b> <00:00:99.000>seven <script>alert(1)</script>',
      '',
      '00:00:06.000 --> 00:00:07.000',
      '<00:00:06.500>only <c.x><00:00:06.500>twice',
      '',
      '00:00:08.000 --> 00:00:09.000',
      'no <00:00:10.000>usable <00:00:08.000>stamp',
      '',
      '00:00:10.000 --> 00:01:00.000',
      many,
    ].join('\n');
    const cues = parseWebVtt(source);
    assert.deepEqual(cues[0], {
      start: 1,
      end: 5,
      text: 'one two three four five six seven alert(1)',
      speaker: 'Eve',
      words: [
        { text: 'one ', start: 1 },
        { text: 'two three four five ', start: 2 },
        { text: 'six seven alert(1)', start: 3 },
      ],
    });
    // One usable timestamp before the first word, the second the same: one piece, so no word timing.
    assert.deepEqual(cues[1], { start: 6, end: 7, text: 'only twice' });
    assert.deepEqual(cues[2], { start: 8, end: 9, text: 'no usable stamp' });
    // More pieces than a page should lay out: the cue is shown whole, without word timing.
    assert.equal(cues[3]?.words, undefined);
    assert.equal(cues[3]?.text.split(' ').length, MAX_CUE_WORDS + 5);
  });
});

describe('player: chapters', () => {
  it('reads back what the engine writes', () => {
    const json = toChaptersJson(
      [
        { title: 'Why Gardens Need Bees', level: 1, start: 0 },
        { title: 'The quiet decline', level: 2, start: 12.118 },
      ],
      32.5,
    );
    assert.deepEqual(parseChapters(json), {
      durationS: 32.5,
      chapters: [
        { title: 'Why Gardens Need Bees', level: 1, start: 0, end: 12.118 },
        { title: 'The quiet decline', level: 2, start: 12.118, end: 32.5 },
      ],
    });
  });

  it('is lenient: bad JSON, missing fields, extra fields, unsorted entries', () => {
    assert.deepEqual(parseChapters('not json'), { chapters: [] });
    assert.deepEqual(parseChapters('[1,2]'), { chapters: [] });
    assert.deepEqual(
      parseChapters(
        JSON.stringify({
          extra: true,
          chapters: [
            { title: 'B', start_s: 10, colour: 'red' },
            { title: '  A  ', level: 0, start_s: 0, end_s: 'x' },
            { title: '', start_s: 5 },
            { title: 'No start' },
            'junk',
          ],
        }),
      ),
      {
        chapters: [
          { title: 'A', level: 1, start: 0, end: 10 },
          { title: 'B', level: 1, start: 10, end: 10 },
        ],
      },
    );
  });
});

describe('player: time helpers', () => {
  it('finds the item being played at a time', () => {
    const items = [{ start: 0 }, { start: 1.5 }, { start: 4 }];
    assert.equal(indexAt([], 3), -1);
    assert.equal(indexAt([{ start: 1 }], 0.5), -1);
    assert.equal(indexAt(items, 0), 0);
    assert.equal(indexAt(items, 1.4999), 1, 'a millisecond early still counts (timeupdate rounding)');
    assert.equal(indexAt(items, 3.9), 1);
    assert.equal(indexAt(items, 400), 2);
  });

  it('tells when the highlight next changes: the next word of the cue, else the next cue', () => {
    const cues = [
      { start: 0, words: [{ start: 0 }, { start: 0.4 }, { start: 0.9 }] },
      { start: 2 },
      { start: 3, words: [{ start: 3 }, { start: 3.5 }] },
    ];
    assert.equal(nextChangeAt(cues, -1), 0, 'before the first cue: its start');
    assert.equal(nextChangeAt(cues, 0), 0.4);
    assert.equal(nextChangeAt(cues, 0.3995), 0.9, 'a millisecond early is already the next word (as indexAt)');
    assert.equal(nextChangeAt(cues, 1.2), 2, 'after the last word of a cue: the next cue');
    assert.equal(nextChangeAt(cues, 2.5), 3, 'a cue without words: the next cue');
    assert.equal(nextChangeAt(cues, 3.1), 3.5);
    assert.equal(nextChangeAt(cues, 3.6), undefined, 'nothing after the last word of the last cue');
    assert.equal(nextChangeAt([], 1), undefined);
  });

  it('formats times for the eye and for screen readers', () => {
    assert.equal(formatTime(0), '0:00');
    assert.equal(formatTime(75.9), '1:15');
    assert.equal(formatTime(3725), '1:02:05');
    assert.equal(formatTime(Number.NaN), '0:00');
    assert.equal(spokenTime(0), '0 seconds');
    assert.equal(spokenTime(61), '1 minute 1 second');
    assert.equal(spokenTime(3720), '1 hour 2 minutes');
  });
});
