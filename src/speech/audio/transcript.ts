// The transcript (WebVTT, one cue per sentence as written) and the chapter list (JSON) of a job.

export interface Cue {
  start: number;
  end: number;
  text: string;
  /** The speaker, for shows with more than one voice. */
  voice?: string;
  /** The cue starts a paragraph of the text as written. */
  paragraph?: boolean;
}

export interface Chapter {
  title: string;
  level: number;
  start: number;
}

function timestamp(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
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

/** `readBy`: who read it, one entry per distinct voice (see voiceNote). */
export function toWebVtt(cues: Cue[], title?: string, readBy: readonly string[] = []): string {
  const header = title ? `WEBVTT - ${title.replace(/\s+/g, ' ').replace(/-->/g, '→')}` : 'WEBVTT';
  const note = voiceNote(readBy);
  const blocks = cues.map((cue, i) => {
    const voice = cue.voice ? `<v ${cue.voice.replace(/[<>&]/g, '')}>` : '';
    const cueBlock = `${i + 1}\n${timestamp(cue.start)} --> ${timestamp(cue.end)}\n${voice}${escapeCueText(cue.text)}`;
    return cue.paragraph ? `${PARAGRAPH_NOTE}\n\n${cueBlock}` : cueBlock;
  });
  return `${[header, ...(note ? [note] : []), ...blocks].join('\n\n')}\n`;
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
