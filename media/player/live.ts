// A running job played from its parts: they are slices of the final MP3's stream, appended in order to one
// SourceBuffer in `sequence` mode, so they play as one stream with no gap at the boundaries. Seeking works within
// what has arrived (the media element's duration grows with each part).
import type { LivePart } from '../../src/webview/protocol';
import type { TranscriptCue } from '../../src/webview/transcript';
import { ui } from './page';

export interface Live {
  jobId: string;
  source: MediaSource;
  url: string;
  buffer?: SourceBuffer;
  queue: Uint8Array[];
  nextIndex: number;
  /** Parts that came ahead of a missing one. */
  ahead: Map<number, LivePart>;
  complete: boolean;
  /** Says why the audio could not be appended. */
  onError: (message: string) => void;
}

/** Starts a MediaSource for a running job with the parts it has so far; the audio element plays `url`. */
export function startLive(jobId: string, parts: LivePart[], onError: (message: string) => void): Live {
  const source = new MediaSource();
  const url = URL.createObjectURL(source);
  const live: Live = { jobId, source, url, queue: [], nextIndex: 0, ahead: new Map(), complete: false, onError };
  source.addEventListener(
    'sourceopen',
    () => {
      if (live.url === '') return;
      const buffer = source.addSourceBuffer('audio/mpeg');
      buffer.mode = 'sequence';
      buffer.addEventListener('updateend', () => pumpLive(live));
      live.buffer = buffer;
      pumpLive(live);
    },
    { once: true },
  );
  for (const part of parts) acceptPart(live, part);
  return live;
}

/** Ends it: the audio element no longer plays from it. */
export function stopLive(live: Live): void {
  delete ui.audio.dataset.liveParts;
  URL.revokeObjectURL(live.url);
  live.url = '';
}

/** Takes a part (in any order; a repeat is ignored) and returns the transcript cues of the parts now in order. */
export function acceptPart(live: Live, part: LivePart): TranscriptCue[] {
  if (part.index < live.nextIndex || live.ahead.has(part.index)) return [];
  live.ahead.set(part.index, part);
  const added: TranscriptCue[] = [];
  for (let next = live.ahead.get(live.nextIndex); next; next = live.ahead.get(live.nextIndex)) {
    live.ahead.delete(live.nextIndex);
    live.nextIndex++;
    live.queue.push(next.bytes);
    added.push(...next.cues);
    // For tests and tools: how many parts are in, and where the second begins (the first boundary).
    ui.audio.dataset.liveParts = String(live.nextIndex);
    if (next.index === 1) ui.audio.dataset.firstBoundary = String(next.startS);
    // And where the parts in so far end by their own times: the MediaSource timeline must end there too (no gap).
    ui.audio.dataset.liveEnd = String(next.startS + next.durationS);
    if (next.final) live.complete = true;
  }
  pumpLive(live);
  return added;
}

function pumpLive(live: Live): void {
  const { buffer, source } = live;
  if (live.url === '' || !buffer || buffer.updating || source.readyState !== 'open') return;
  const next = live.queue.shift();
  if (next) {
    try {
      buffer.appendBuffer(next as Uint8Array<ArrayBuffer>);
    } catch (error) {
      live.onError(error instanceof Error ? error.message : String(error));
    }
    return;
  }
  if (live.complete) source.endOfStream();
}
