// The ID3v2 tag at the start of audio.mp3: title, where the article came from, the engine as the encoder, who read
// it (a TXXX frame "Voice": "the voice af_heart (kokoro at host:port, …)", "the built-in voice rms (Flite)"), the
// article's language (TLAN, ISO 639-2: "eng", "deu"), and the
// chapters (CHAP frames under one CTOC table of contents, as podcast players read them). Written by node-id3
// (ID3v2.3, text in UTF-16). Every string here comes from the page and is hostile: made well-formed, stripped of
// control characters and bounded, so the tag stays small and every player can read it.
//
// The tag is made when the audio is finished (the chapters' times are known only then) and put before the audio by
// the MP3 writer (mp3-writer.ts).
import NodeID3 from 'node-id3';

export interface AudioTags {
  title?: string;
  /** The page the article came from (URL jobs). */
  sourceUrl?: string;
  /** Where it came from, for people: a host name. */
  site?: string;
  /** Settings of the encoder, for the "encoded with" frame. */
  encoder: string;
  /** Who read it (issue 25): the voices' descriptions, in a TXXX frame "Voice". */
  voice?: string;
  /** The article's language, ISO 639-2 (three letters, "deu"), in the TLAN frame (src/speech/text/language.ts). */
  language?: string;
  /** In the order they are spoken; `startS` in the audio as written (after an intro). */
  chapters: { title: string; level: number; startS: number }[];
  durationS: number;
}

/** What the pipeline asks for; the audio worker adds the audio's length. */
export type TagRequest = Omit<AudioTags, 'durationS'>;

export const MAX_TITLE_CHARS = 200;
export const MAX_CHAPTER_TITLE_CHARS = 120;
const MAX_URL_CHARS = 2000;
/** A voice's description names its voice, model and host (each at most 200 characters in a voices file). */
export const MAX_VOICE_CHARS = 700;
/** A table of contents lists at most 255 entries (its count is one byte). */
export const MAX_TAG_CHAPTERS = 255;

/** Text a player can show: well-formed, no control or format characters, one line, at most `max` characters. */
export function tagText(text: string, max: number): string {
  const clean = text
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = Array.from(clean);
  return chars.length <= max ? clean : `${chars.slice(0, max - 1).join('')}…`;
}

/** The URL in its plain ASCII form (ID3 URL frames are Latin-1), or undefined when it is not one worth keeping. */
function tagUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const href = new URL(url).href;
    return href.length <= MAX_URL_CHARS && /^https?:/.test(href) ? href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Which chapters go in the tag: all of them when they fit the table of contents, else those of the highest levels
 * that fit (the sections, not their subsections), else the first 255.
 */
export function tagChapters(chapters: { level: number }[]): number[] {
  const all = chapters.map((_, index) => index);
  if (all.length <= MAX_TAG_CHAPTERS) return all;
  const levels = [...new Set(chapters.map((c) => c.level))].sort((a, b) => a - b);
  let chosen: number[] = [];
  for (const level of levels) {
    const next = all.filter((i) => chapters[i]!.level <= level);
    if (next.length > MAX_TAG_CHAPTERS) break;
    chosen = next;
  }
  return chosen.length > 0 ? chosen : all.slice(0, MAX_TAG_CHAPTERS);
}

export function id3Tag(tags: AudioTags): Uint8Array {
  const chosen = tagChapters(tags.chapters);
  const ms = (seconds: number) => Math.max(0, Math.min(0xfffffffe, Math.round(seconds * 1000)));
  const chapter = chosen.map((index, k) => {
    const start = tags.chapters[index]!.startS;
    const next = chosen[k + 1];
    const end = next !== undefined ? tags.chapters[next]!.startS : tags.durationS;
    return {
      elementID: `chp${k}`,
      startTimeMs: ms(start),
      endTimeMs: ms(Math.max(start, end)),
      tags: { title: tagText(tags.chapters[index]!.title, MAX_CHAPTER_TITLE_CHARS) || `Chapter ${k + 1}` },
    };
  });
  const title = tags.title ? tagText(tags.title, MAX_TITLE_CHARS) : '';
  const url = tagUrl(tags.sourceUrl);
  const site = tags.site ? tagText(tags.site, MAX_TITLE_CHARS) : '';
  const voice = tags.voice ? tagText(tags.voice, MAX_VOICE_CHARS) : '';
  const frames: NodeID3.Tags = {
    ...(title ? { title } : {}),
    ...(site ? { artist: site } : {}),
    ...(url ? { userDefinedUrl: [{ description: 'Source', url }] } : {}),
    encodingTechnology: tagText(tags.encoder, MAX_TITLE_CHARS),
    ...(voice ? { userDefinedText: [{ description: 'Voice', value: voice }] } : {}),
    ...(tags.language && /^[a-z]{3}$/.test(tags.language) ? { language: tags.language } : {}),
    ...(chapter.length > 0
      ? {
          chapter,
          tableOfContents: [
            {
              elementID: 'toc',
              isOrdered: true,
              elements: chapter.map((c) => c.elementID),
              tags: { title: 'Chapters' },
            },
          ],
        }
      : {}),
  };
  return new Uint8Array(NodeID3.create(frames));
}
