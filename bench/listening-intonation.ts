// Listening bench rows for intonation (src/speech/voice/pitch.ts): how far each model's voices end a yes/no
// question above the rest of the line, in semitones, beside statements and wh-questions; and how list items end:
// inline lists with and without the serial comma, and the lines of a Markdown bullet list. Each line is
// synthesized as the engine asks for it (the model's voice settings and its intonation), and measured with the
// tests' YIN pitch tracker (test/support/pitch-track.ts), not the engine's own.
import { intonationOf } from '../src/speech/text/intonation';
import { MODEL_PROFILES, type Voice } from '../src/speech/text/profiles';
import type { SynthesisPool, Utterance } from '../src/speech/voice/synth-pool';
import { endPitch, pitchContour } from '../test/support/pitch-track';
import { type ModelId, type Row, atLeast, shortModel } from './lib/report';

const QUESTIONS = [
  'Is the new version ready for everyone?',
  'Are you sure?',
  'Did it work?',
  'Can we start the meeting now?',
  'Will the service keep running overnight?',
];
const STATEMENTS = ['The new version is ready for everyone.', 'We start the meeting now.'];
const WH_QUESTIONS = ['What is the new version called?', 'Where does the service keep its files?'];
const LIST = 'We bought apples, pears, and plums.';
const LIST_NO_SERIAL = 'We bought apples, pears and plums.';
/** The items of a Markdown bullet list, each a line of its own: said as an item before the last, and as the last. */
const BULLETS = [
  'Fast startup.',
  'It keeps every job on disk.',
  'Chapters and tags in the file.',
  'A player with speed control.',
  'Read-along transcripts',
];
/** The least rise of a list item's end the unit tests accept. */
const MIN_ITEM_RISE = 1;
/** The least rise the unit tests accept (test/unit/pipeline/intonation.test.ts). */
const MIN_RISE = 2;

const median = (values: number[]) =>
  values.length === 0 ? Number.NaN : [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
// No voiced frame where one was looked for (kal16's diphones, at times): said so, not as NaN.
const st = (value: number) =>
  Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(1)} st` : 'no pitch found';

function say(
  pool: SynthesisPool,
  text: string,
  voice: Voice,
  segments = false,
  listItem?: 'middle' | 'last',
): Promise<Utterance> {
  const intonation = voice.intonation ? intonationOf(text, { listItem }) : undefined;
  return pool.synthesize(text, voice.flite, {
    durationStretch: voice.durationStretch,
    pitchSpread: voice.pitchSpread,
    ...(intonation ? { intonation } : {}),
    ...(segments ? { segments: true } : {}),
  });
}

const end = (u: Utterance, from?: number, to?: number) => endPitch(pitchContour(u.samples, u.sampleRate, from, to));

/** One row per voice of each model: the median end of its yes/no questions against the rest of the line. */
export async function intonationRows(
  pool: SynthesisPool,
  models: readonly ModelId[],
  progress: (m: string) => void,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const model of models) {
    for (const voice of MODEL_PROFILES[model].voices) {
      progress(`listening: intonation of ${shortModel(model)}, ${voice.name}`);
      const measureWith = async (as: Voice, texts: string[]) =>
        median(await Promise.all(texts.map(async (text) => end(await say(pool, text, as)))));
      const measure = (texts: string[]) => measureWith(voice, texts);
      const rise = await measure(QUESTIONS);
      // The baseline in the same run: the same voice without intonation.
      const flite = voice.intonation ? await measureWith({ ...voice, intonation: false }, QUESTIONS) : rise;
      const statements = await measure(STATEMENTS);
      const wh = await measure(WH_QUESTIONS);
      // List items: the stretches between Flite's pauses (a one-utterance line, so its segments are its times), and
      // without the serial comma the last stretch split where "and" (ae n d) starts.
      const itemEnds = async (text: string) => {
        const list = await say(pool, text, voice, true);
        const segments = list.segments!;
        const stretches: [number, number][] = [];
        let start = 0;
        segments.forEach((s, i) => {
          const begin = i > 0 ? segments[i - 1]!.end : 0;
          if (s.phone !== 'pau') return;
          if (begin > start) stretches.push([start, begin]);
          start = s.end;
        });
        const [from, to] = stretches.at(-1)!;
        const and = segments.findIndex((s, i) => s.phone === 'ae' && segments[i + 1]?.phone === 'n' && s.end > from);
        if (and > 0 && segments[and - 1]!.end > from)
          stretches.splice(-1, 1, [from, segments[and - 1]!.end], [segments[and - 1]!.end, to]);
        return stretches.map(([a, b]) => end(list, a, b));
      };
      const items = await itemEnds(LIST);
      const unserial = await itemEnds(LIST_NO_SERIAL);
      // Bullet items: each line said as an item before the last and as the last, beside Flite alone.
      const bullets = async (listItem?: 'middle' | 'last') =>
        median(await Promise.all(BULLETS.map(async (text) => end(await say(pool, text, voice, false, listItem)))));
      const middle = await bullets('middle');
      const last = await bullets('last');
      const alone = voice.intonation ? await bullets() : middle;
      rows.push({
        bench: 'listening: question rise (end of a yes/no question vs the rest of its line)',
        case: `${shortModel(model)}, ${voice.name} (${voice.flite}${voice.intonation ? '' : ', no intonation'})`,
        result: st(rise),
        ...(voice.intonation ? { target: `>= ${st(MIN_RISE)}`, verdict: atLeast(rise, MIN_RISE) } : {}),
        note: `median of ${QUESTIONS.length} questions (Flite alone ${st(flite)}); statements end ${st(statements)}, wh-questions ${st(wh)}`,
      });
      rows.push({
        bench: 'listening: list items (end of a bullet item before the last vs the rest of its line)',
        case: `${shortModel(model)}, ${voice.name} (${voice.flite}${voice.intonation ? '' : ', no intonation'})`,
        result: st(middle),
        ...(voice.intonation ? { target: `>= ${st(MIN_ITEM_RISE)}`, verdict: atLeast(middle, MIN_ITEM_RISE) } : {}),
        note: `median of ${BULLETS.length} items (Flite alone ${st(alone)}); as the last item ${st(last)}; "apples, pears, and plums" items end ${items.map(st).join(', ')}; "apples, pears and plums" ${unserial.map(st).join(', ')}`,
      });
    }
  }
  return rows;
}
