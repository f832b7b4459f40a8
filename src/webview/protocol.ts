// Messages between the player panel (extension host) and its page (media/player/main.ts). Both sides check every
// message they receive with the guards below, since a webview message is untyped JSON. No vscode or Node imports:
// the page bundle includes this file.
import type { ChapterMark, CueWord, TranscriptCue } from './transcript';

export const PLAYBACK_RATES = [0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4] as const;
export const MIN_RATE = 0.5;
export const MAX_RATE = 4;
export const SKIP_SECONDS = 15;

/** What the page keeps with vscode.setState, handed back to the serializer after a reload. */
export interface PlayerPageState {
  jobId: string;
}

export interface PlayerJobInfo {
  id: string;
  title: string;
  /** e.g. "article-audio-1-mini". */
  model: string;
  /** Where it came from, for the header ("notes.md", "example.com"). */
  sourceLabel?: string;
  /** Whether the source document can be opened (selection and document jobs). */
  hasSourceDocument: boolean;
}

/**
 * A part of a running job's audio: a slice of the final MP3's stream (so parts appended in order play as the final
 * audio would). The page learns of each part with its times and sentences; its bytes come only when the page asks
 * for them (`needPart` -> `partAudio`), since the page keeps a window of the stream, not all of it
 * (src/webview/live-window.ts).
 */
export interface LivePart {
  index: number;
  /** Where it starts in the final audio, seconds. */
  startS: number;
  durationS: number;
  final: boolean;
  /** The part's sentences, timed in the final audio. */
  cues: TranscriptCue[];
}

/** How a running job played from its parts ended. */
export type LiveEndState = 'finished' | 'cancelled' | 'failed';

/** What the page is told when the job it plays from parts ends (also given with a load of an ended job's parts). */
export interface LiveEnd {
  state: LiveEndState;
  /** Said under the player ("Conversion cancelled: the 41:20 converted before plays."). */
  note: string;
  /** Ways on, as buttons beside the note (Convert Again). */
  actions: PageAction[];
}

/** Extension -> page: play this job. */
export interface LoadMessage {
  type: 'load';
  job: PlayerJobInfo;
  /** A webview URI of the cached MP3; empty while the job runs and `live` holds its parts instead. */
  audioUrl: string;
  /**
   * Set while the job still runs: the parts here so far (more come as `part` messages); `ended` when the job was
   * cancelled or failed and these parts are all there is.
   */
  live?: { parts: LivePart[]; ended?: LiveEnd };
  cues: TranscriptCue[];
  chapters: ChapterMark[];
  /** From chapters.json or the job record; the audio element's own duration wins once known. */
  durationS?: number;
  /** Where to start (seconds), remembered from the last time. */
  position: number;
  rate: number;
  /** 0..1 */
  volume: number;
  muted: boolean;
  /** Why the transcript is empty, when it is. */
  transcriptNote?: string;
  /** Start playing once loaded: the listening queue went on to this job after the previous one ended. */
  autoplay?: boolean;
}

/** Extension -> page: the job cannot be played (files gone, job removed). */
export interface UnavailableMessage {
  type: 'unavailable';
  job: { id: string; title: string };
  reason: string;
  /** Ways out offered as buttons. */
  actions: PageAction[];
}

/** Extension -> page: the next part of the running job being played. */
export interface PartMessage {
  type: 'part';
  jobId: string;
  part: LivePart;
}

/** Extension -> page: the bytes of a part the page asked for (`needPart`), or why there are none. */
export interface PartAudioMessage {
  type: 'partAudio';
  jobId: string;
  index: number;
  bytes?: Uint8Array;
  error?: string;
}

/**
 * Extension -> page: the running job played from its parts ended. Finished: every part is on the page, which plays
 * on from them with no gap and takes the finished job's transcript, chapters and length; the finished file is loaded
 * the next time the job is opened. Cancelled or failed: what was converted still plays, with `note` and `actions`.
 */
export interface LiveEndMessage extends LiveEnd {
  type: 'liveEnd';
  jobId: string;
  /** The finished job's transcript and chapters (replacing those the parts brought) and length. */
  cues?: TranscriptCue[];
  chapters?: ChapterMark[];
  durationS?: number;
}

/** One entry of the listening queue, as the page shows it under "Up next". */
export interface UpNextItem {
  id: string;
  title: string;
  /** False while the job is still converting (the queue waits for it). */
  ready: boolean;
}

/** Extension -> page: the listening queue changed. */
export interface QueueMessage {
  type: 'queue';
  items: UpNextItem[];
}

/**
 * Extension -> page: a playback command from outside the page: play/pause (a keybinding in the editor), or play from
 * a time of the job shown (Play from Here on a sentence of its source).
 */
export type ControlMessage =
  { type: 'control'; command: 'togglePlay' } | { type: 'control'; command: 'playFrom'; time: number };

export type HostMessage =
  LoadMessage | UnavailableMessage | PartMessage | PartAudioMessage | LiveEndMessage | QueueMessage | ControlMessage;

/** Page -> extension: the page is listening; queued messages may be sent. */
export interface ReadyMessage {
  type: 'ready';
}

/** Page -> extension: where playback is. Sent when the sentence changes, on play/pause/seek, and every second or two. */
export interface ProgressMessage {
  type: 'progress';
  jobId: string;
  /** Seconds. */
  time: number;
  /** Index of the sentence being spoken, -1 before the first. */
  cue: number;
  playing: boolean;
  ended: boolean;
  /** The sleep timer stopped playback at the end of this article: the listening queue does not go on. */
  sleep?: boolean;
}

/** Page -> extension: go on to the next article of the listening queue (the media key or the OS "next" control). */
export interface NextMessage {
  type: 'next';
}

/**
 * Page -> extension: the word being spoken changed (issue 26, read-along word by word): the editor showing the
 * source marks it. `word` indexes the cue's `words` (-1: none).
 */
export interface WordMessage {
  type: 'word';
  jobId: string;
  cue: number;
  word: number;
}

export interface SettingsMessage {
  type: 'settings';
  rate: number;
  volume: number;
  muted: boolean;
}

export type PageAction =
  'saveAs' | 'openSource' | 'pickJob' | 'retryJob' | 'removeJob' | 'showJobs' | 'playNow' | 'removeFromQueue';

export interface ActionMessage {
  type: 'action';
  action: PageAction;
  jobId: string;
}

export interface PageErrorMessage {
  type: 'error';
  jobId: string;
  message: string;
}

/** Page -> extension: send the bytes of this part of the running job being played (its window needs them). */
export interface NeedPartMessage {
  type: 'needPart';
  jobId: string;
  index: number;
}

export type PageMessage =
  | ReadyMessage
  | ProgressMessage
  | NextMessage
  | WordMessage
  | SettingsMessage
  | ActionMessage
  | PageErrorMessage
  | NeedPartMessage;

const PAGE_ACTIONS: readonly PageAction[] = [
  'saveAs',
  'openSource',
  'pickJob',
  'retryJob',
  'removeJob',
  'showJobs',
  'playNow',
  'removeFromQueue',
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isString = (value: unknown): value is string => typeof value === 'string';
const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.length > 0;
const isOptional = <T>(value: unknown, guard: (v: unknown) => v is T): boolean => value === undefined || guard(value);

export function isPageAction(value: unknown): value is PageAction {
  return typeof value === 'string' && (PAGE_ACTIONS as readonly string[]).includes(value);
}

export function isRate(value: unknown): value is number {
  return isFiniteNumber(value) && value >= MIN_RATE && value <= MAX_RATE;
}

export function isVolume(value: unknown): value is number {
  return isFiniteNumber(value) && value >= 0 && value <= 1;
}

export function isTranscriptCue(value: unknown): value is TranscriptCue {
  return (
    isRecord(value) &&
    isFiniteNumber(value.start) &&
    isFiniteNumber(value.end) &&
    isString(value.text) &&
    isOptional(value.speaker, isString) &&
    isOptional(value.paragraph, (v): v is boolean => typeof v === 'boolean') &&
    isOptional(
      value.words,
      (v): v is CueWord[] =>
        Array.isArray(v) && v.every((w) => isRecord(w) && isString(w.text) && isFiniteNumber(w.start)),
    )
  );
}

export function isChapterMark(value: unknown): value is ChapterMark {
  return (
    isRecord(value) &&
    isString(value.title) &&
    isFiniteNumber(value.level) &&
    isFiniteNumber(value.start) &&
    isFiniteNumber(value.end)
  );
}

export function isLivePart(value: unknown): value is LivePart {
  return (
    isRecord(value) &&
    Number.isInteger(value.index) &&
    (value.index as number) >= 0 &&
    isFiniteNumber(value.startS) &&
    isFiniteNumber(value.durationS) &&
    typeof value.final === 'boolean' &&
    Array.isArray(value.cues) &&
    value.cues.every(isTranscriptCue)
  );
}

const LIVE_END_STATES: readonly LiveEndState[] = ['finished', 'cancelled', 'failed'];

function isLiveEnd(value: unknown): value is LiveEnd {
  return (
    isRecord(value) &&
    typeof value.state === 'string' &&
    (LIVE_END_STATES as readonly string[]).includes(value.state) &&
    isString(value.note) &&
    Array.isArray(value.actions) &&
    value.actions.every(isPageAction)
  );
}

function isUpNextItem(value: unknown): value is UpNextItem {
  return isRecord(value) && isNonEmptyString(value.id) && isString(value.title) && typeof value.ready === 'boolean';
}

function isJobInfo(value: unknown): value is PlayerJobInfo {
  return (
    isRecord(value) &&
    isNonEmptyString(value.id) &&
    isString(value.title) &&
    isString(value.model) &&
    isOptional(value.sourceLabel, isString) &&
    typeof value.hasSourceDocument === 'boolean'
  );
}

export function isHostMessage(value: unknown): value is HostMessage {
  if (!isRecord(value)) return false;
  switch (value.type) {
    case 'load':
      return (
        isJobInfo(value.job) &&
        (isNonEmptyString(value.audioUrl) ||
          (isRecord(value.live) &&
            Array.isArray(value.live.parts) &&
            value.live.parts.every(isLivePart) &&
            isOptional(value.live.ended, isLiveEnd))) &&
        Array.isArray(value.cues) &&
        value.cues.every(isTranscriptCue) &&
        Array.isArray(value.chapters) &&
        value.chapters.every(isChapterMark) &&
        isOptional(value.durationS, isFiniteNumber) &&
        isFiniteNumber(value.position) &&
        value.position >= 0 &&
        isRate(value.rate) &&
        isVolume(value.volume) &&
        typeof value.muted === 'boolean' &&
        isOptional(value.transcriptNote, isString) &&
        isOptional(value.autoplay, (v): v is boolean => typeof v === 'boolean')
      );
    case 'queue':
      return Array.isArray(value.items) && value.items.length <= 1000 && value.items.every(isUpNextItem);
    case 'control':
      return (
        value.command === 'togglePlay' ||
        (value.command === 'playFrom' && isFiniteNumber(value.time) && value.time >= 0)
      );
    case 'part':
      return isNonEmptyString(value.jobId) && isLivePart(value.part);
    case 'partAudio':
      return (
        isNonEmptyString(value.jobId) &&
        Number.isInteger(value.index) &&
        (value.index as number) >= 0 &&
        isOptional(value.bytes, (v): v is Uint8Array => v instanceof Uint8Array) &&
        isOptional(value.error, isString) &&
        (value.bytes !== undefined || value.error !== undefined)
      );
    case 'liveEnd':
      return (
        isNonEmptyString(value.jobId) &&
        isLiveEnd(value) &&
        isOptional(value.cues, (v): v is TranscriptCue[] => Array.isArray(v) && v.every(isTranscriptCue)) &&
        isOptional(value.chapters, (v): v is ChapterMark[] => Array.isArray(v) && v.every(isChapterMark)) &&
        isOptional(value.durationS, isFiniteNumber)
      );
    case 'unavailable':
      return (
        isRecord(value.job) &&
        isNonEmptyString(value.job.id) &&
        isString(value.job.title) &&
        isString(value.reason) &&
        Array.isArray(value.actions) &&
        value.actions.every(isPageAction)
      );
    default:
      return false;
  }
}

export function isPageMessage(value: unknown): value is PageMessage {
  if (!isRecord(value)) return false;
  switch (value.type) {
    case 'ready':
    case 'next':
      return true;
    case 'progress':
      return (
        isNonEmptyString(value.jobId) &&
        isFiniteNumber(value.time) &&
        value.time >= 0 &&
        Number.isInteger(value.cue) &&
        (value.cue as number) >= -1 &&
        typeof value.playing === 'boolean' &&
        typeof value.ended === 'boolean' &&
        isOptional(value.sleep, (v): v is boolean => typeof v === 'boolean')
      );
    case 'word':
      return (
        isNonEmptyString(value.jobId) &&
        Number.isInteger(value.cue) &&
        (value.cue as number) >= -1 &&
        Number.isInteger(value.word) &&
        (value.word as number) >= -1
      );
    case 'settings':
      return isRate(value.rate) && isVolume(value.volume) && typeof value.muted === 'boolean';
    case 'action':
      return isPageAction(value.action) && isNonEmptyString(value.jobId);
    case 'error':
      return isNonEmptyString(value.jobId) && isString(value.message);
    case 'needPart':
      return isNonEmptyString(value.jobId) && Number.isInteger(value.index) && (value.index as number) >= 0;
    default:
      return false;
  }
}

export function isPlayerPageState(value: unknown): value is PlayerPageState {
  return isRecord(value) && isNonEmptyString(value.jobId);
}

/** The nearest allowed step above or below `rate` (for the [ and ] keys). */
export function stepRate(rate: number, direction: 1 | -1): number {
  if (direction > 0) return PLAYBACK_RATES.find((r) => r > rate + 1e-6) ?? MAX_RATE;
  return [...PLAYBACK_RATES].reverse().find((r) => r < rate - 1e-6) ?? MIN_RATE;
}

export function clampRate(rate: number): number {
  return Number.isFinite(rate) ? Math.min(MAX_RATE, Math.max(MIN_RATE, rate)) : 1;
}
