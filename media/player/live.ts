// A running job played from its parts: they are slices of the final MP3's stream, appended to one SourceBuffer in
// `sequence` mode, so that parts appended one after another play as one stream with no gap at the boundaries.
//
// The SourceBuffer holds a window around the playhead, not the whole stream (src/webview/live-window.ts decides what
// to remove and what to append; this file carries out one step at a time, since a SourceBuffer does one update at a
// time). The page holds no part's bytes: it learns of each part (times and sentences) as it arrives, asks the
// extension for a part's bytes when the window needs it (`needPart`, answered by `partAudio`) and lets them go once
// appended. A seek outside the window appends the part at the new playhead with the SourceBuffer's timestampOffset
// set to the part's start, which places it on the timeline; the parts after it then follow it in sequence.
//
// The MediaSource's duration is kept at the end of the parts that arrived (the converted-so-far total: the page shows
// it, and seeking anywhere in it works); when the final part is in and the window reaches it, endOfStream() lets the
// media element end. When the job finishes, this stream plays on: the finished file is only loaded the next time the
// job is opened, so the listener hears no gap (main.ts).
import type { LivePart } from '../../src/webview/protocol';
import {
  DEFAULT_LIMITS,
  type Range,
  type WindowLimits,
  isBuffered,
  isComplete,
  liveEnd,
  nextStep,
  shrink,
} from '../../src/webview/live-window';
import type { TranscriptCue } from '../../src/webview/transcript';
import { ui } from './page';

/** A part's bytes asked for and not come in this long are asked for again (the extension was busy or reloaded). */
const ASK_AGAIN_MS = 5_000;

export interface LiveHooks {
  /** Where the listener is (the pending seek while the audio loads). */
  playhead(): number;
  /** Asks the extension for a part's bytes; they come to receiveBytes(). */
  requestPart(index: number): void;
  /** Says why the audio could not be appended. */
  onError(message: string): void;
}

export class LiveStream {
  readonly url: string;
  private readonly source = new MediaSource();
  private buffer: SourceBuffer | undefined;
  /** The parts in order from index 0 (times and sentences; no bytes). */
  private readonly parts: LivePart[] = [];
  /** Parts that came ahead of a missing one. */
  private readonly ahead = new Map<number, LivePart>();
  /** The index of the last part of the job, once known (the final part came, or the job ended early). */
  private finalIndex: number | undefined;
  /** Bytes that came for a part the window needs, until they are appended. */
  private readonly bytes = new Map<number, Uint8Array>();
  private asked: { index: number; at: number } | undefined;
  private appending: number | undefined;
  private lastAppended: number | undefined;
  private limits: WindowLimits = DEFAULT_LIMITS;
  /** After the browser refused an append for space with the window already at its smallest: wait for the playhead. */
  private blockedAt: number | undefined;
  private stopped = false;
  private appends = 0;
  private removes = 0;

  constructor(
    readonly jobId: string,
    parts: LivePart[],
    private readonly hooks: LiveHooks,
  ) {
    this.url = URL.createObjectURL(this.source);
    this.source.addEventListener(
      'sourceopen',
      () => {
        if (this.stopped) return;
        const buffer = this.source.addSourceBuffer('audio/mpeg');
        buffer.mode = 'sequence';
        buffer.addEventListener('updateend', () => this.updated());
        buffer.addEventListener('error', () => this.hooks.onError('the browser could not decode a part of the audio'));
        this.buffer = buffer;
        this.pump();
      },
      { once: true },
    );
    for (const part of parts) this.accept(part);
  }

  /** Where the parts that arrived end: the converted-so-far total. */
  get end(): number {
    return liveEnd(this.parts);
  }

  /** Whether every part of the job is here (the final one came, or the job ended and no more will). */
  get complete(): boolean {
    return isComplete(this.parts, this.finalIndex);
  }

  /** Ends it: the audio element no longer plays from it. */
  stop(): void {
    this.stopped = true;
    this.bytes.clear();
    delete ui.audio.dataset.liveParts;
    URL.revokeObjectURL(this.url);
  }

  /** Takes a part (in any order; a repeat is ignored) and returns the transcript cues of the parts now in order. */
  accept(part: LivePart): TranscriptCue[] {
    if (part.index < this.parts.length || this.ahead.has(part.index)) return [];
    if (this.finalIndex !== undefined && part.index > this.finalIndex) return [];
    this.ahead.set(part.index, part);
    const added: TranscriptCue[] = [];
    for (let next = this.ahead.get(this.parts.length); next; next = this.ahead.get(this.parts.length)) {
      this.ahead.delete(next.index);
      this.parts.push(next);
      added.push(...next.cues);
      if (next.final) this.finalIndex = next.index;
    }
    this.mark();
    this.pump();
    return added;
  }

  /** No more parts will come (the job was cancelled or failed): the stream ends where its parts end. */
  close(): void {
    this.finalIndex ??= this.parts.length - 1;
    this.ahead.clear();
    this.pump();
  }

  /** A part's bytes, asked for with requestPart(). */
  receiveBytes(index: number, bytes: Uint8Array): void {
    if (this.stopped) return;
    if (this.asked?.index === index) this.asked = undefined;
    this.bytes.set(index, bytes);
    this.pump();
  }

  /** Does the next step of the window if the SourceBuffer is free; called on every change and as the playhead moves. */
  pump(): void {
    const { buffer, source } = this;
    if (this.stopped || !buffer || buffer.updating || source.readyState === 'closed') return;
    const buffered = ranges(buffer);
    const playhead = this.hooks.playhead();
    // The timeline reaches the end of what has arrived, so that the whole of it can be sought to and the total shown.
    const end = Math.max(this.end, buffered[buffered.length - 1]?.[1] ?? 0);
    if (source.readyState === 'open' && end > 0 && !(source.duration >= end - 0.001)) {
      source.duration = end;
    }
    const step = nextStep({
      parts: this.parts,
      buffered,
      playhead,
      limits: this.limits,
      ...(this.lastAppended !== undefined ? { lastAppended: this.lastAppended } : {}),
    });
    if (step.kind === 'remove') {
      this.removes++;
      buffer.remove(step.start, step.end);
      return;
    }
    if (step.kind === 'idle') {
      this.blockedAt = undefined;
      // The whole job is here and its end is in the buffer: the media element may end there.
      const last = this.parts[this.parts.length - 1];
      if (this.complete && last && isBuffered(last, buffered) && source.readyState === 'open') source.endOfStream();
      return;
    }
    if (this.blockedAt !== undefined && Math.abs(playhead - this.blockedAt) < 1) return;
    const bytes = this.bytes.get(step.index);
    if (!bytes) {
      const now = Date.now();
      if (this.asked?.index !== step.index || now - this.asked.at > ASK_AGAIN_MS) {
        this.asked = { index: step.index, at: now };
        this.hooks.requestPart(step.index);
      }
      return;
    }
    try {
      if (step.offsetS !== undefined) buffer.timestampOffset = step.offsetS;
      buffer.appendBuffer(bytes as Uint8Array<ArrayBuffer>);
      this.appending = step.index;
      this.blockedAt = undefined;
    } catch (error) {
      if (error instanceof DOMException && error.name === 'QuotaExceededError') {
        // The browser's cap is lower than the window: make the window smaller and try again after removing more.
        const smaller = shrink(this.limits);
        if (smaller.aheadS === this.limits.aheadS && smaller.behindS === this.limits.behindS) this.blockedAt = playhead;
        this.limits = smaller;
        ui.audio.dataset.liveWindow = `${smaller.behindS} s behind, ${smaller.aheadS} s ahead`;
        queueMicrotask(() => this.pump());
        return;
      }
      this.hooks.onError(error instanceof Error ? error.message : String(error));
    }
  }

  private updated(): void {
    if (this.appending !== undefined) {
      const index = this.appending;
      this.appending = undefined;
      this.lastAppended = index;
      this.bytes.delete(index);
      this.appends++;
      const part = this.parts[index];
      // For tests and tools: where the part appended last ends by its own times (the buffered range must end there).
      if (part) ui.audio.dataset.appendedEnd = String(part.startS + part.durationS);
    }
    this.mark();
    this.pump();
  }

  /** For tests and tools: the stream's state on the audio element's data attributes. */
  private mark(): void {
    if (this.stopped) return;
    const data = ui.audio.dataset;
    data.liveParts = String(this.parts.length);
    const second = this.parts[1];
    if (second) data.firstBoundary = String(second.startS);
    data.liveEnd = String(this.end);
    data.liveComplete = String(this.complete);
    data.liveAppends = String(this.appends);
    data.liveRemoves = String(this.removes);
  }
}

function ranges(buffer: SourceBuffer): Range[] {
  const result: Range[] = [];
  const buffered = buffer.buffered;
  for (let i = 0; i < buffered.length; i++) result.push([buffered.start(i), buffered.end(i)]);
  return result;
}
