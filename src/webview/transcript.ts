// The read-along data of a job: its WebVTT transcript (one cue per sentence) and its chapter list, parsed leniently.
// Plain TypeScript with no vscode or Node imports: the extension parses, the page only displays, and unit tests run it
// in plain Node.

export interface TranscriptCue {
  /** Seconds. */
  start: number;
  end: number;
  /** The sentence as written, with markup removed and entities decoded. */
  text: string;
  /** The speaker of a show with several voices (`<v Alex>`). */
  speaker?: string;
  /** The cue starts a paragraph of the text (a `NOTE paragraph` block stands before it in the file). */
  paragraph?: boolean;
  /**
   * The cue's text cut at its word timestamps (`<00:01:02.345>`, the WebVTT karaoke form): each piece and when it
   * starts. The first piece starts with the cue; the pieces' texts together are `text`. Only when the cue had at
   * least one usable timestamp (strictly increasing, after the cue's start and before its end).
   */
  words?: CueWord[];
}

export interface CueWord {
  text: string;
  /** Seconds, on the same time line as the cue. */
  start: number;
}

export interface ChapterMark {
  title: string;
  /** Heading level (1 = top). */
  level: number;
  start: number;
  end: number;
}

const TIMING = /^\s*((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})\s+-->\s+((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})/;

/** `hh:mm:ss.ttt` or `mm:ss.ttt` to seconds; NaN when it is not a timestamp. */
export function parseTimestamp(value: string): number {
  const match = /^(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})$/.exec(value.trim());
  if (!match) return Number.NaN;
  const [, h = '0', m = '0', s = '0', fraction = '0'] = match;
  return Number(h) * 3600 + Number(m) * 60 + Number(s) + Number(fraction.padEnd(3, '0')) / 1000;
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  nbsp: '\u00a0',
  lrm: '\u200e',
  rlm: '\u200f',
  quot: '"',
  apos: "'",
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return safeCodePoint(parseInt(name.slice(2), 16)) ?? whole;
    if (name.startsWith('#')) return safeCodePoint(parseInt(name.slice(1), 10)) ?? whole;
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

function safeCodePoint(code: number): string | undefined {
  return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
}

/** The most word pieces a cue is cut into; a cue with more timestamps than that is shown without word timing. */
export const MAX_CUE_WORDS = 2000;

const TIMESTAMP_TAG = /^(?:\d+:)?\d{1,2}:\d{2}\.\d{3}$/;

/**
 * Cue payload to plain text: the first voice tag names the speaker; other tags (`<i>`, `<c.x>`, `<00:00:01.000>`)
 * are dropped; lines are joined with spaces. With the cue's times, its word timestamps cut the text into `words`
 * (see TranscriptCue.words); a timestamp that is not after the one before it (or the cue's start), or not before the
 * cue's end, is ignored: its word joins the piece before it.
 */
export function cueText(
  payload: string,
  times?: { start: number; end: number },
): { text: string; speaker?: string; words?: CueWord[] } {
  let speaker: string | undefined;
  const pieces: { raw: string; start: number }[] = [{ raw: '', start: times?.start ?? 0 }];
  let last = times?.start ?? 0;
  let stamps = 0;
  let at = 0;
  for (const match of payload.matchAll(/<([^>]*)>/g)) {
    pieces.at(-1)!.raw += payload.slice(at, match.index);
    at = match.index + match[0].length;
    const tag = match[1]!.trim();
    const voice = /^v(?:\.[^\s>]*)?\s+(.+)$/.exec(tag);
    if (voice?.[1] && speaker === undefined) speaker = decodeEntities(voice[1].trim());
    if (!times || !TIMESTAMP_TAG.test(tag)) continue;
    const start = parseTimestamp(tag);
    if (!(start > last && start < times.end)) continue;
    if (++stamps > MAX_CUE_WORDS) continue;
    last = start;
    pieces.push({ raw: '', start });
  }
  pieces.at(-1)!.raw += payload.slice(at);
  // Whitespace runs become one space and the ends are trimmed, across the pieces as over the whole text.
  const words: CueWord[] = [];
  let text = '';
  for (const piece of pieces) {
    let part = decodeEntities(piece.raw).replace(/\s+/g, ' ');
    if (text === '' || text.endsWith(' ')) part = part.replace(/^ /, '');
    if (!part) continue;
    text += part;
    words.push({ text: part, start: piece.start });
  }
  if (text.endsWith(' ')) {
    text = text.slice(0, -1);
    const lastWord = words.at(-1)!;
    lastWord.text = lastWord.text.slice(0, -1);
    if (!lastWord.text) words.pop();
  }
  const timed = stamps > 0 && stamps <= MAX_CUE_WORDS && words.length > 1;
  if (timed) words[0]!.start = times!.start;
  return { text, ...(speaker ? { speaker } : {}), ...(timed ? { words } : {}) };
}

/**
 * Parses a WebVTT file into cues in time order. Tolerant: a missing header, CRLF line ends, cue ids, cue settings,
 * NOTE/STYLE/REGION blocks and malformed blocks are accepted or skipped, never thrown on.
 */
export function parseWebVtt(source: string): TranscriptCue[] {
  const blocks = source
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/);
  const cues: TranscriptCue[] = [];
  let paragraphNext = false;
  for (const block of blocks) {
    const lines = block.split('\n').filter((line, i) => i > 0 || line.trim() !== '');
    if (/^NOTE paragraph\s*$/.test(lines[0] ?? '') && lines.length === 1) {
      paragraphNext = true;
      continue;
    }
    const timingAt = lines.findIndex((line) => line.includes('-->'));
    if (timingAt < 0 || timingAt > 1) continue;
    const timing = TIMING.exec(lines[timingAt] ?? '');
    if (!timing?.[1] || !timing[2]) continue;
    const start = parseTimestamp(timing[1]);
    const end = parseTimestamp(timing[2]);
    if (!Number.isFinite(start) || !Number.isFinite(end)) continue;
    const { text, speaker, words } = cueText(lines.slice(timingAt + 1).join('\n'), {
      start,
      end: Math.max(start, end),
    });
    if (!text) continue;
    cues.push({
      start,
      end: Math.max(start, end),
      text,
      ...(speaker ? { speaker } : {}),
      ...(words ? { words } : {}),
      ...(paragraphNext ? { paragraph: true } : {}),
    });
    paragraphNext = false;
  }
  // Cues must be in start order for the binary search; a stable sort keeps equal starts in file order.
  return cues.sort((a, b) => a.start - b.start);
}

/** A cue moved `seconds` later, its words with it (a part's cues are timed from the part's start). */
export function laterCue(cue: TranscriptCue, seconds: number): TranscriptCue {
  return {
    ...cue,
    start: cue.start + seconds,
    end: cue.end + seconds,
    ...(cue.words ? { words: cue.words.map((word) => ({ text: word.text, start: word.start + seconds })) } : {}),
  };
}

/**
 * Parses chapters.json (`{duration_s, chapters: [{title, level, start_s, end_s}]}`). Unknown fields are ignored and
 * entries without a title or a start are skipped; a missing end is the next chapter's start (or the duration).
 */
export function parseChapters(source: string): { chapters: ChapterMark[]; durationS?: number } {
  let data: unknown;
  try {
    data = JSON.parse(source);
  } catch {
    return { chapters: [] };
  }
  if (!isObject(data)) return { chapters: [] };
  const durationS = finiteNumber(data.duration_s);
  const list = Array.isArray(data.chapters) ? (data.chapters as unknown[]) : [];
  const marks: { title: string; level: number; start: number; end?: number }[] = [];
  for (const item of list) {
    if (!isObject(item) || typeof item.title !== 'string' || !item.title.trim()) continue;
    const start = finiteNumber(item.start_s);
    if (start === undefined || start < 0) continue;
    const level = finiteNumber(item.level);
    const end = finiteNumber(item.end_s);
    marks.push({
      title: item.title.trim(),
      level: level !== undefined && level >= 1 ? Math.floor(level) : 1,
      start,
      ...(end !== undefined ? { end } : {}),
    });
  }
  marks.sort((a, b) => a.start - b.start);
  const chapters = marks.map((mark, i) => ({
    title: mark.title,
    level: mark.level,
    start: mark.start,
    end: Math.max(mark.start, mark.end ?? marks[i + 1]?.start ?? durationS ?? mark.start),
  }));
  return durationS !== undefined ? { chapters, durationS } : { chapters };
}

/**
 * When the highlight next changes after `time`: the next word of the cue being played, or the next cue's start
 * (undefined after the last start). Starts count as indexAt counts them (a millisecond early is already there).
 */
export function nextChangeAt(
  cues: readonly { start: number; words?: readonly { start: number }[] }[],
  time: number,
): number | undefined {
  const cue = indexAt(cues, time);
  const words = cues[cue]?.words;
  const word = words?.[indexAt(words, time) + 1];
  const next = cues[cue + 1]?.start;
  if (word === undefined) return next;
  return next === undefined ? word.start : Math.min(word.start, next);
}

/** Index of the item being played at `time`: the last one that started at or before it (-1 before the first). */
export function indexAt(items: readonly { start: number }[], time: number): number {
  let low = 0;
  let high = items.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if ((items[mid]?.start ?? Infinity) <= time + 1e-3) {
      found = mid;
      low = mid + 1;
    } else {
      high = mid - 1;
    }
  }
  return found;
}

/** 75 -> "1:15", 3725 -> "1:02:05". */
export function formatTime(seconds: number): string {
  const total = Number.isFinite(seconds) && seconds > 0 ? Math.floor(seconds) : 0;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0
    ? `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`
    : `${m}:${String(s).padStart(2, '0')}`;
}

/** For screen readers: 75 -> "1 minute 15 seconds". */
export function spokenTime(seconds: number): string {
  const total = Number.isFinite(seconds) && seconds > 0 ? Math.floor(seconds) : 0;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const part = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  return [h > 0 ? part(h, 'hour') : '', m > 0 ? part(m, 'minute') : '', s > 0 || total === 0 ? part(s, 'second') : '']
    .filter(Boolean)
    .join(' ');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function finiteNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
