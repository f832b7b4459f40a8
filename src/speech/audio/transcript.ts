// The transcript (WebVTT, one cue per sentence as written) and the chapter list (JSON) of a job.
import type { WrittenWord } from '../text/word-map';

export interface Cue {
  start: number;
  end: number;
  text: string;
  /** The speaker, for shows with more than one voice. */
  voice?: string;
  /** The cue starts a paragraph of the text as written. */
  paragraph?: boolean;
  /**
   * The cue's words as written with where each starts in the audio (seconds, the time line of the cues), when the
   * voice gave word timings: written as WebVTT cue timestamps, `<00:01:02.345>` before each timed word after the
   * first (the karaoke form). Without them the cue's text is `text`.
   */
  words?: WrittenWord[];
}

/** A cue moved `seconds` earlier (a part's transcript is timed from the part's start). */
export function shiftCue(cue: Cue, seconds: number): Cue {
  return {
    ...cue,
    start: Math.max(0, cue.start - seconds),
    end: Math.max(0, cue.end - seconds),
    ...(cue.words
      ? {
          words: cue.words.map((w) =>
            w.start === undefined ? { text: w.text } : { text: w.text, start: Math.max(0, w.start - seconds) },
          ),
        }
      : {}),
  };
}

export interface Chapter {
  title: string;
  level: number;
  start: number;
}

function millis(seconds: number): number {
  return Math.max(0, Math.round(seconds * 1000));
}

function timestamp(seconds: number): string {
  const ms = millis(seconds);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms % 1000, 3)}`;
}

function escapeCueText(text: string): string {
  // A cue may not contain "-->" or a blank line; & and < start entities and tags.
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\s*\n\s*/g, ' ');
}

/**
 * The cue's text, with a cue timestamp before each timed word after the first. A timestamp is written only when it
 * is after the cue's start and the timestamp before it, and before the cue's end (in whole milliseconds, as written),
 * so a reader gets them strictly increasing inside the cue; an untimed word is read as part of the word before it.
 */
function cueText(cue: Cue): string {
  if (!cue.words || cue.words.length === 0) return escapeCueText(cue.text);
  const end = millis(cue.end);
  let last = millis(cue.start);
  return cue.words
    .map((word, i) => {
      const text = escapeCueText(word.text);
      if (i === 0 || word.start === undefined) return text;
      const at = millis(word.start);
      if (at <= last || at >= end) return text;
      last = at;
      return `<${timestamp(word.start)}>${text}`;
    })
    .join(' ');
}

/**
 * A `NOTE paragraph` block before a cue says that it starts a paragraph of the text, so a player lays the transcript
 * out as the text was written whatever the pauses of the voice (WebVTT players ignore NOTE blocks).
 */
export const PARAGRAPH_NOTE = 'NOTE paragraph';

/**
 * The `NOTE voice: …` block after the header: who read the job (issue 25), e.g. "the voice af_heart (kokoro at
 * 127.0.0.1:8880, an OpenAI-compatible speech API)" or "the built-in voice rms (Flite)". One line: a voices file's
 * names are free text, so line breaks and "-->" (which would end a NOTE and start a cue) are taken out.
 */
export function voiceNote(readBy: readonly string[]): string | undefined {
  const names = readBy.map((name) => name.replace(/\s+/g, ' ').replace(/-->/g, '→').trim()).filter(Boolean);
  return names.length > 0 ? `NOTE voice: ${names.join(' and ')}` : undefined;
}

/**
 * The `NOTE language: de` block after the header: the article's language as detected (src/speech/text/language.ts),
 * a BCP 47 tag. Anything else than a tag's characters is left out.
 */
export function languageNote(language: string | undefined): string | undefined {
  return language && /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(language) ? `NOTE language: ${language}` : undefined;
}

/** `readBy`: who read it, one entry per distinct voice (see voiceNote); `language`: see languageNote. */
export function toWebVtt(cues: Cue[], title?: string, readBy: readonly string[] = [], language?: string): string {
  const header = title ? `WEBVTT - ${title.replace(/\s+/g, ' ').replace(/-->/g, '→')}` : 'WEBVTT';
  const note = voiceNote(readBy);
  const languageBlock = languageNote(language);
  const blocks = cues.map((cue, i) => {
    const voice = cue.voice ? `<v ${cue.voice.replace(/[<>&]/g, '')}>` : '';
    const cueBlock = `${i + 1}\n${timestamp(cue.start)} --> ${timestamp(cue.end)}\n${voice}${cueText(cue)}`;
    return cue.paragraph ? `${PARAGRAPH_NOTE}\n\n${cueBlock}` : cueBlock;
  });
  return `${[header, ...(note ? [note] : []), ...(languageBlock ? [languageBlock] : []), ...blocks].join('\n\n')}\n`;
}

export function toChaptersJson(chapters: Chapter[], durationS: number): string {
  const list = chapters.map((chapter, i) => ({
    title: chapter.title,
    level: chapter.level,
    start_s: Math.round(chapter.start * 1000) / 1000,
    end_s: Math.round((chapters[i + 1]?.start ?? durationS) * 1000) / 1000,
  }));
  return `${JSON.stringify({ duration_s: Math.round(durationS * 1000) / 1000, chapters: list }, null, 2)}\n`;
}
