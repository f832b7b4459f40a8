// The transcript and chapter list of the player page: drawn once per job (and again as a running job's parts add
// sentences), with the sentence being spoken marked and kept in sight unless the reader scrolled away, and inside it
// the word being spoken when the transcript has word timings (issue 26): each timed piece of a cue is a span of its
// own, drawn once, and following the audio only moves one class from span to span.
import { type ChapterMark, type TranscriptCue, formatTime, indexAt, spokenTime } from '../../src/webview/transcript';
import { ui } from './page';

/**
 * A paragraph break is drawn where the speaker changes, a chapter starts, and where the text has one: the transcript
 * marks the cues that start a paragraph. A transcript without marks (another service's) is broken where the
 * narration pauses this long.
 */
const PARAGRAPH_PAUSE_S = 0.4;
/** After the reader scrolls the transcript by hand, it stops following the audio for this long. */
const FOLLOW_PAUSE_MS = 4_000;

export class TranscriptView {
  private cueElements: HTMLElement[] = [];
  /** Per cue, the spans of its timed words (empty for a cue without word timings). */
  private wordElements: HTMLElement[][] = [];
  /** The word marked as being spoken, in the marked sentence (-1: none). */
  word = -1;
  private chapterElements: HTMLButtonElement[] = [];
  /** The sentence marked as being spoken (-1: none). */
  cue = -1;
  private chapter = -1;
  private cues: TranscriptCue[] = [];
  private chapters: ChapterMark[] = [];
  /**
   * Where drawing stopped, for the next sentences of a growing transcript: the paragraph the last sentence is in,
   * whether it was a heading, the last speaker named, and whether the text marks its paragraphs (undefined: nothing
   * drawn yet).
   */
  private flow?: {
    marked: boolean;
    paragraph?: HTMLParagraphElement;
    previousWasHeading: boolean;
    shownSpeaker?: string;
  };
  /** Until this time (ms) the transcript does not follow the audio, because the reader scrolled it by hand. */
  private followPausedUntil = 0;
  private readonly reducedMotion = window.matchMedia('(prefers-reduced-motion: reduce)');

  /** `onChapter` runs when a chapter of the list is chosen. */
  constructor(private readonly onChapter: (chapter: ChapterMark, index: number) => void) {
    for (const type of ['wheel', 'touchmove'] as const) {
      ui.transcript.addEventListener(
        type,
        () => {
          this.followPausedUntil = Date.now() + FOLLOW_PAUSE_MS;
        },
        { passive: true },
      );
    }
  }

  /** Draws a job's chapters and transcript, scrolled to the top, nothing marked. */
  show(cues: TranscriptCue[], chapters: ChapterMark[]): void {
    this.cues = cues;
    this.chapters = chapters;
    this.cue = -1;
    this.word = -1;
    this.chapter = -1;
    this.renderChapters();
    this.renderTranscript();
  }

  /**
   * Draws a grown transcript (a running job's new sentences): only the new sentences are drawn, after the others, so
   * a long article's hundreds of parts cost each part its own sentences (drawing the whole transcript again for each
   * part grew with the square of its length). What is marked and where the reader is stay as they are. A transcript
   * that is not the drawn one with sentences added is drawn again whole, where the reader is.
   */
  grow(cues: TranscriptCue[]): void {
    const drawn = this.cues;
    const added =
      cues.length >= drawn.length &&
      drawn.every((cue, i) => cues[i] === cue) &&
      (this.flow?.marked ?? false) === cues.some((cue) => cue.paragraph);
    this.cues = cues;
    if (added && this.flow) {
      this.appendCues(drawn.length);
      return;
    }
    const scroll = ui.transcript.scrollTop;
    this.cue = -1;
    this.word = -1;
    this.renderTranscript();
    ui.transcript.scrollTop = scroll;
  }

  /** The transcript follows the audio again (after a seek or when playback starts). */
  follow(): void {
    this.followPausedUntil = 0;
  }

  /** Marks the sentence at `index` (and its chapter); `scroll` brings it into sight. `time` places the chapter when no sentence is marked. */
  highlight(index: number, scroll: boolean, time: number): void {
    if (index !== this.cue) {
      const old = this.cueElements[this.cue];
      old?.classList.remove('current');
      old?.removeAttribute('aria-current');
      this.wordElements[this.cue]?.[this.word]?.classList.remove('current-word');
      this.word = -1;
      this.cue = index;
      const now = this.cueElements[index];
      if (now) {
        now.classList.add('current');
        now.setAttribute('aria-current', 'true');
        if (scroll) this.scrollIntoTranscript(now);
      }
    }
    const chapter = indexAt(this.chapters, this.cues[index]?.start ?? time);
    if (chapter !== this.chapter) {
      this.chapterElements[this.chapter]?.removeAttribute('aria-current');
      this.chapter = chapter;
      this.chapterElements[chapter]?.setAttribute('aria-current', 'true');
    }
  }

  /**
   * Marks the word being spoken at `time` in the marked sentence (a class only: the sentence keeps aria-current, so
   * a screen reader is not told of every word). Returns whether the marked word changed.
   */
  highlightWord(time: number): boolean {
    const words = this.cues[this.cue]?.words;
    const index = words && this.wordElements[this.cue]?.length ? indexAt(words, time) : -1;
    if (index === this.word) return false;
    const elements = this.wordElements[this.cue];
    elements?.[this.word]?.classList.remove('current-word');
    this.word = index;
    elements?.[index]?.classList.add('current-word');
    return true;
  }

  private renderChapters(): void {
    ui.chapterList.replaceChildren();
    const elements: HTMLButtonElement[] = [];
    this.chapters.forEach((chapter, index) => {
      const item = document.createElement('li');
      item.className = `level-${Math.min(chapter.level, 4)}`;
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'chapter';
      const title = document.createElement('span');
      title.className = 'chapter-title';
      title.textContent = chapter.title;
      const time = document.createElement('span');
      time.className = 'chapter-time';
      time.textContent = formatTime(chapter.start);
      button.append(title, time);
      button.setAttribute('aria-label', `${chapter.title}, at ${spokenTime(chapter.start)}`);
      button.addEventListener('click', () => this.onChapter(chapter, index));
      item.append(button);
      ui.chapterList.append(item);
      elements.push(button);
    });
    ui.chapters.hidden = this.chapters.length === 0;
    this.chapterElements = elements;
  }

  private renderTranscript(): void {
    ui.cues.replaceChildren();
    this.cueElements = [];
    this.wordElements = [];
    this.flow = { marked: this.cues.some((cue) => cue.paragraph), previousWasHeading: false };
    this.appendCues(0);
    ui.transcript.scrollTop = 0;
  }

  /** Draws the cues from `from` on after those drawn, continuing the paragraph the last one is in. */
  private appendCues(from: number): void {
    const { cues, chapters } = this;
    const flow = this.flow!;
    const chapterStarts = chapters.map((c) => c.start);
    for (let index = from; index < cues.length; index++) {
      const cue = cues[index]!;
      const previous = cues[index - 1];
      const chapterHere = chapters.find((c) => Math.abs(c.start - cue.start) < 0.75 && sameText(c.title, cue.text));
      const startsChapter = chapterStarts.some(
        (start) => start <= cue.start + 1e-3 && (previous === undefined || start > previous.start + 1e-3),
      );
      const newSpeaker = cue.speaker !== undefined && cue.speaker !== previous?.speaker;
      const pause = flow.marked
        ? cue.paragraph === true
        : previous !== undefined && cue.start - previous.end >= PARAGRAPH_PAUSE_S;
      let paragraph = flow.paragraph;
      if (!paragraph || chapterHere || startsChapter || newSpeaker || pause || flow.previousWasHeading) {
        paragraph = document.createElement('p');
        paragraph.className = chapterHere ? `cue-group heading level-${Math.min(chapterHere.level, 4)}` : 'cue-group';
        // The speaker is named where the voice changes, not on every paragraph of the same host.
        if (cue.speaker && cue.speaker !== flow.shownSpeaker) {
          flow.shownSpeaker = cue.speaker;
          const speaker = document.createElement('span');
          speaker.className = 'speaker';
          speaker.textContent = cue.speaker;
          paragraph.append(speaker);
        }
        ui.cues.append(paragraph);
        flow.paragraph = paragraph;
      }
      const span = document.createElement('span');
      span.className = 'cue';
      span.dataset.index = String(index);
      const words: HTMLElement[] = [];
      if (cue.words) {
        // Text only (textContent): the words are another service's text as much as the sentence is.
        for (const word of cue.words) {
          // The space after a word stays outside its span, so the mark ends with the word.
          const text = word.text.trimEnd();
          const piece = document.createElement('span');
          piece.className = 'word';
          piece.textContent = text;
          span.append(piece);
          if (text.length < word.text.length) span.append(document.createTextNode(word.text.slice(text.length)));
          words.push(piece);
        }
      } else span.textContent = cue.text;
      this.wordElements.push(words);
      span.title = `Play from ${formatTime(cue.start)}`;
      paragraph.append(span, document.createTextNode(' '));
      this.cueElements.push(span);
      // A heading read aloud is a paragraph of its own: what follows it starts a new one.
      flow.previousWasHeading = chapterHere !== undefined;
    }
  }

  private scrollIntoTranscript(target: HTMLElement): void {
    if (Date.now() < this.followPausedUntil) return;
    const box = ui.transcript.getBoundingClientRect();
    const line = target.getBoundingClientRect();
    const margin = Math.min(48, box.height / 4);
    if (line.top >= box.top + margin && line.bottom <= box.bottom - margin) return;
    // Not scrollIntoView: that also scrolls the page itself, pushing the controls out of sight.
    const top = line.top - box.top + ui.transcript.scrollTop - box.height / 2 + line.height / 2;
    ui.transcript.scrollTo({ top: Math.max(0, top), behavior: this.reducedMotion.matches ? 'auto' : 'smooth' });
  }
}

function sameText(a: string, b: string): boolean {
  const words = (s: string) =>
    s
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu)
      ?.join(' ') ?? '';
  return words(a) === words(b);
}
