// The player page inside the webview: plays the job's MP3, shows the transcript with the sentence being spoken, and
// reports progress to the extension (which remembers positions and highlights the source document). Every message
// from the extension is checked with the protocol's guards; job text is only ever set with textContent.
import {
  type HostMessage,
  type LivePart,
  type LoadMessage,
  type PageAction,
  type PageMessage,
  type PlayerPageState,
  type UpNextItem,
  PLAYBACK_RATES,
  SKIP_SECONDS,
  clampRate,
  isHostMessage,
  isPlayerPageState,
  stepRate,
} from '../../src/webview/protocol';
import { type ChapterMark, type TranscriptCue, formatTime, indexAt, spokenTime } from '../../src/webview/transcript';

interface VsCodeApi {
  postMessage(message: PageMessage): void;
  getState(): unknown;
  setState(state: PlayerPageState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();

function element<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`The player page has no #${id}`);
  return found;
}

const ui = {
  player: element('player', HTMLDivElement),
  loading: element('loading', HTMLParagraphElement),
  title: element('job-title', HTMLHeadingElement),
  meta: element('job-meta', HTMLParagraphElement),
  openSource: element('open-source', HTMLButtonElement),
  saveAs: element('save-as', HTMLButtonElement),
  play: element('play', HTMLButtonElement),
  back: element('back', HTMLButtonElement),
  forward: element('forward', HTMLButtonElement),
  timeCurrent: element('time-current', HTMLSpanElement),
  timeTotal: element('time-total', HTMLSpanElement),
  seek: element('seek', HTMLInputElement),
  rate: element('rate', HTMLSelectElement),
  mute: element('mute', HTMLButtonElement),
  volume: element('volume', HTMLInputElement),
  error: element('playback-error', HTMLParagraphElement),
  chapters: element('chapters', HTMLElement),
  chapterList: element('chapter-list', HTMLOListElement),
  transcript: element('transcript', HTMLElement),
  transcriptNote: element('transcript-note', HTMLParagraphElement),
  cues: element('cues', HTMLDivElement),
  audio: element('audio', HTMLAudioElement),
  unavailable: element('unavailable', HTMLElement),
  unavailableTitle: element('unavailable-title', HTMLHeadingElement),
  unavailableReason: element('unavailable-reason', HTMLParagraphElement),
  unavailableActions: element('unavailable-actions', HTMLDivElement),
  announcer: element('announcer', HTMLParagraphElement),
  upNext: element('up-next', HTMLElement),
  upNextList: element('up-next-list', HTMLOListElement),
};

interface Loaded {
  message: LoadMessage;
  cueElements: HTMLElement[];
  chapterElements: HTMLButtonElement[];
  /** Seconds to seek to once the audio's metadata is known. */
  pendingSeek: number | undefined;
  ready: boolean;
  cue: number;
  chapter: number;
  lastPosted: number;
}

let loaded: Loaded | undefined;

/**
 * A running job played from its parts: they are slices of the final MP3's stream, appended in order to one
 * SourceBuffer in `sequence` mode, so they play as one stream with no gap at the boundaries. Seeking works within
 * what has arrived (the media element's duration grows with each part).
 */
interface Live {
  jobId: string;
  source: MediaSource;
  url: string;
  buffer?: SourceBuffer;
  queue: Uint8Array[];
  nextIndex: number;
  /** Parts that came ahead of a missing one. */
  ahead: Map<number, LivePart>;
  complete: boolean;
}

let live: Live | undefined;
/** Set when the finished file replaces the parts while playing: play on once it is loaded. */
let resumeAfterLoad = false;
/** Until this time (ms) the transcript does not follow the audio, because the reader scrolled it by hand. */
let followPausedUntil = 0;
const reducedMotion = window.matchMedia('(prefers-reduced-motion: reduce)');
/** While playing, progress goes to the extension at least this often (it saves every few seconds). */
const POST_EVERY_MS = 1_000;

const ACTION_LABELS: Record<PageAction, string> = {
  saveAs: 'Save As…',
  openSource: 'Open Source',
  pickJob: 'Play Another Job…',
  retryJob: 'Convert Again',
  removeJob: 'Remove from List',
  showJobs: 'Show Jobs',
  playNow: 'Play Now',
  removeFromQueue: 'Remove from Queue',
};

function post(message: PageMessage): void {
  vscode.postMessage(message);
}

function announce(text: string): void {
  ui.announcer.textContent = text;
}

function rateLabel(rate: number): string {
  return `${Number(rate.toFixed(2))}×`;
}

// ---- showing a job -------------------------------------------------------------------------------------------------

function stopLive(): void {
  if (!live) return;
  delete ui.audio.dataset.liveParts;
  URL.revokeObjectURL(live.url);
  live = undefined;
}

function startLive(jobId: string, parts: LivePart[]): string {
  const source = new MediaSource();
  const url = URL.createObjectURL(source);
  const current: Live = { jobId, source, url, queue: [], nextIndex: 0, ahead: new Map(), complete: false };
  live = current;
  source.addEventListener(
    'sourceopen',
    () => {
      if (live !== current) return;
      const buffer = source.addSourceBuffer('audio/mpeg');
      buffer.mode = 'sequence';
      buffer.addEventListener('updateend', () => pumpLive(current));
      current.buffer = buffer;
      pumpLive(current);
    },
    { once: true },
  );
  for (const part of parts) acceptPart(current, part, false);
  return url;
}

function acceptPart(target: Live, part: LivePart, render: boolean): void {
  if (part.index < target.nextIndex || target.ahead.has(part.index)) return;
  target.ahead.set(part.index, part);
  const added: TranscriptCue[] = [];
  for (let next = target.ahead.get(target.nextIndex); next; next = target.ahead.get(target.nextIndex)) {
    target.ahead.delete(target.nextIndex);
    target.nextIndex++;
    target.queue.push(next.bytes);
    added.push(...next.cues);
    // For tests and tools: how many parts are in, and where the second begins (the first boundary).
    ui.audio.dataset.liveParts = String(target.nextIndex);
    if (next.index === 1) ui.audio.dataset.firstBoundary = String(next.startS);
    // And where the parts in so far end by their own times: the MediaSource timeline must end there too (no gap).
    ui.audio.dataset.liveEnd = String(next.startS + next.durationS);
    if (next.final) target.complete = true;
  }
  if (render && added.length > 0 && loaded) {
    loaded.message = { ...loaded.message, cues: [...loaded.message.cues, ...added] };
    const scroll = ui.transcript.scrollTop;
    renderTranscript(loaded.message.cues, loaded.message.chapters);
    ui.transcript.scrollTop = scroll;
    loaded.cue = -1;
    highlight(indexAt(loaded.message.cues, currentTime()), false);
  }
  pumpLive(target);
}

function pumpLive(target: Live): void {
  const { buffer, source } = target;
  if (!buffer || buffer.updating || source.readyState !== 'open') return;
  const next = target.queue.shift();
  if (next) {
    try {
      buffer.appendBuffer(next as Uint8Array<ArrayBuffer>);
    } catch (error) {
      showPlaybackError(error instanceof Error ? error.message : String(error));
    }
    return;
  }
  if (target.complete) source.endOfStream();
}

function showJob(message: LoadMessage): void {
  // The finished file of the job playing from its parts: go on from the same place, playing if it was.
  const switching =
    live !== undefined && live.jobId === message.job.id && !message.live && loaded?.message.job.id === message.job.id;
  const position = switching ? ui.audio.currentTime : message.position;
  // The listening queue went on to this job: it plays as the one before it did.
  resumeAfterLoad = (switching && !ui.audio.paused) || message.autoplay === true;
  ui.audio.pause();
  stopLive();
  message = { ...message, position };
  loaded = {
    message,
    cueElements: [],
    chapterElements: [],
    pendingSeek: message.position > 0 ? message.position : undefined,
    ready: false,
    cue: -1,
    chapter: -1,
    lastPosted: 0,
  };
  vscode.setState({ jobId: message.job.id });
  ui.loading.hidden = true;
  ui.unavailable.hidden = true;
  ui.player.hidden = false;
  ui.error.hidden = true;

  ui.title.textContent = message.job.title;
  const duration = message.durationS;
  ui.meta.textContent = [
    message.job.model,
    duration !== undefined ? formatTime(duration) : undefined,
    message.job.sourceLabel,
  ]
    .filter(Boolean)
    .join(' · ');
  ui.openSource.hidden = !message.job.hasSourceDocument;

  // The finished file's transcript is the one that grew from the parts: the reader stays where they were in it.
  const transcriptScroll = ui.transcript.scrollTop;
  renderChapters(message.chapters);
  renderTranscript(message.cues, message.chapters);
  if (switching) ui.transcript.scrollTop = transcriptScroll;
  ui.transcriptNote.hidden = !message.transcriptNote;
  ui.transcriptNote.textContent = message.transcriptNote ?? '';

  ui.audio.defaultPlaybackRate = message.rate;
  ui.audio.volume = message.volume;
  ui.audio.muted = message.muted;
  ui.audio.src = message.live ? startLive(message.job.id, message.live.parts) : message.audioUrl;
  ui.audio.playbackRate = message.rate;
  ui.audio.load();
  showRate(message.rate);
  updateTime(message.position, duration ?? 0);
  updateVolume();
  updatePlayButton();
  highlight(indexAt(message.cues, message.position), false);
}

function addRateOption(rate: number): void {
  const option = new Option(rateLabel(rate), String(rate));
  const after = [...ui.rate.options].find((o) => Number(o.value) > rate);
  ui.rate.add(option, after ?? null);
  ui.rate.value = String(rate);
}

function renderChapters(chapters: ChapterMark[]): void {
  ui.chapterList.replaceChildren();
  const elements: HTMLButtonElement[] = [];
  chapters.forEach((chapter, index) => {
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
    button.addEventListener('click', () => seekTo(chapter.start, `Chapter ${index + 1}: ${chapter.title}`));
    item.append(button);
    ui.chapterList.append(item);
    elements.push(button);
  });
  ui.chapters.hidden = chapters.length === 0;
  if (loaded) loaded.chapterElements = elements;
}

/**
 * A paragraph break is drawn where the speaker changes, a chapter starts, and where the text has one: the transcript
 * marks the cues that start a paragraph. A transcript without marks (another service's) is broken where the
 * narration pauses this long.
 */
const PARAGRAPH_PAUSE_S = 0.4;

function renderTranscript(cues: TranscriptCue[], chapters: ChapterMark[]): void {
  ui.cues.replaceChildren();
  const elements: HTMLElement[] = [];
  let paragraph: HTMLParagraphElement | undefined;
  let previous: TranscriptCue | undefined;
  let previousWasHeading = false;
  let shownSpeaker: string | undefined;
  const chapterStarts = chapters.map((c) => c.start);
  const marked = cues.some((cue) => cue.paragraph);
  cues.forEach((cue, index) => {
    const chapterHere = chapters.find((c) => Math.abs(c.start - cue.start) < 0.75 && sameText(c.title, cue.text));
    const startsChapter = chapterStarts.some(
      (start) => start <= cue.start + 1e-3 && (previous === undefined || start > previous.start + 1e-3),
    );
    const newSpeaker = cue.speaker !== undefined && cue.speaker !== previous?.speaker;
    const pause = marked
      ? cue.paragraph === true
      : previous !== undefined && cue.start - previous.end >= PARAGRAPH_PAUSE_S;
    if (!paragraph || chapterHere || startsChapter || newSpeaker || pause || previousWasHeading) {
      paragraph = document.createElement('p');
      paragraph.className = chapterHere ? `cue-group heading level-${Math.min(chapterHere.level, 4)}` : 'cue-group';
      // The speaker is named where the voice changes, not on every paragraph of the same host.
      if (cue.speaker && cue.speaker !== shownSpeaker) {
        shownSpeaker = cue.speaker;
        const speaker = document.createElement('span');
        speaker.className = 'speaker';
        speaker.textContent = cue.speaker;
        paragraph.append(speaker);
      }
      ui.cues.append(paragraph);
    }
    const span = document.createElement('span');
    span.className = 'cue';
    span.dataset.index = String(index);
    span.textContent = cue.text;
    span.title = `Play from ${formatTime(cue.start)}`;
    paragraph.append(span, document.createTextNode(' '));
    elements.push(span);
    previous = cue;
    // A heading read aloud is a paragraph of its own: what follows it starts a new one.
    previousWasHeading = chapterHere !== undefined;
  });
  if (loaded) loaded.cueElements = elements;
  ui.transcript.scrollTop = 0;
}

function sameText(a: string, b: string): boolean {
  const words = (s: string) =>
    s
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu)
      ?.join(' ') ?? '';
  return words(a) === words(b);
}

/** The listening queue under the transport: each job can be played now or taken out. Titles only as text. */
function showQueue(items: UpNextItem[]): void {
  ui.upNext.hidden = items.length === 0;
  ui.upNextList.replaceChildren(
    ...items.map((item) => {
      const row = document.createElement('li');
      const play = document.createElement('button');
      play.type = 'button';
      play.className = 'up-next-title';
      play.textContent = item.title;
      play.title = item.ready ? 'Play now' : 'Still converting; it plays when ready';
      play.disabled = !item.ready;
      play.addEventListener('click', () => post({ type: 'action', action: 'playNow', jobId: item.id }));
      row.append(play);
      if (!item.ready) {
        const state = document.createElement('span');
        state.className = 'up-next-state';
        state.textContent = 'converting…';
        row.append(state);
      }
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'icon-button up-next-remove';
      remove.textContent = '×';
      remove.setAttribute('aria-label', `Remove ${item.title} from the queue`);
      remove.title = 'Remove from the queue';
      remove.addEventListener('click', () => post({ type: 'action', action: 'removeFromQueue', jobId: item.id }));
      row.append(remove);
      return row;
    }),
  );
}

function showUnavailable(message: Extract<HostMessage, { type: 'unavailable' }>): void {
  ui.audio.pause();
  stopLive();
  ui.audio.removeAttribute('src');
  ui.audio.load();
  loaded = undefined;
  vscode.setState({ jobId: message.job.id });
  ui.loading.hidden = true;
  ui.player.hidden = true;
  ui.unavailable.hidden = false;
  ui.unavailableTitle.textContent = message.job.title;
  ui.unavailableReason.textContent = message.reason;
  ui.unavailableActions.replaceChildren(
    ...message.actions.map((action, i) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = ACTION_LABELS[action];
      if (i > 0) button.className = 'secondary';
      button.addEventListener('click', () => post({ type: 'action', action, jobId: message.job.id }));
      return button;
    }),
  );
  ui.unavailableActions.querySelector('button')?.focus();
}

// ---- playback ------------------------------------------------------------------------------------------------------

function duration(): number {
  const known = ui.audio.duration;
  return Number.isFinite(known) && known > 0 ? known : (loaded?.message.durationS ?? 0);
}

function togglePlay(): void {
  if (!loaded) return;
  if (ui.audio.paused) void play();
  else ui.audio.pause();
}

async function play(): Promise<void> {
  try {
    if (ui.audio.ended) ui.audio.currentTime = 0;
    await ui.audio.play();
  } catch (error) {
    // AbortError only means a new source was loaded in between.
    if (error instanceof DOMException && error.name === 'AbortError') return;
    showPlaybackError(error instanceof Error ? error.message : String(error));
  }
}

function seekTo(time: number, what?: string): void {
  if (!loaded) return;
  const target = Math.min(Math.max(0, time), Math.max(0, duration() - 0.05));
  if (!loaded.ready) {
    loaded.pendingSeek = target;
  } else {
    ui.audio.currentTime = target;
  }
  followPausedUntil = 0;
  updateTime(target, duration());
  highlight(indexAt(loaded.message.cues, target), true);
  if (what) announce(`${what}, ${spokenTime(target)}`);
  postProgress(true);
}

function skip(seconds: number): void {
  seekTo(currentTime() + seconds, seconds < 0 ? `Back ${-seconds} seconds` : `Forward ${seconds} seconds`);
}

function currentTime(): number {
  return loaded?.ready === false && loaded.pendingSeek !== undefined ? loaded.pendingSeek : ui.audio.currentTime;
}

function stepSentence(direction: 1 | -1): void {
  if (!loaded || loaded.message.cues.length === 0) return;
  const cues = loaded.message.cues;
  const now = currentTime();
  const here = indexAt(cues, now);
  // "Previous" from the middle of a sentence goes back to its start first, as in most players.
  const intoSentence = here >= 0 ? now - (cues[here]?.start ?? 0) : 0;
  const next = direction > 0 ? here + 1 : intoSentence > 1.5 ? here : here - 1;
  const cue = cues[Math.min(cues.length - 1, Math.max(0, next))];
  if (cue) seekTo(cue.start);
}

function setRate(rate: number): void {
  const value = clampRate(rate);
  ui.audio.playbackRate = value;
  ui.audio.defaultPlaybackRate = value;
  showRate(value);
}

function showRate(rate: number): void {
  if (ui.rate.value === String(rate)) return;
  ui.rate.value = String(rate);
  if (ui.rate.value !== String(rate)) addRateOption(rate);
}

function toggleMute(): void {
  ui.audio.muted = !ui.audio.muted;
  // Show it now; the volumechange event that also does so comes a moment later.
  updateVolume();
}

function showPlaybackError(text: string): void {
  ui.error.textContent = `The audio could not be played: ${text}`;
  ui.error.hidden = false;
  if (loaded) post({ type: 'error', jobId: loaded.message.job.id, message: text });
}

function postProgress(force: boolean): void {
  if (!loaded?.ready) return;
  const now = Date.now();
  if (!force && now - loaded.lastPosted < POST_EVERY_MS) return;
  loaded.lastPosted = now;
  post({
    type: 'progress',
    jobId: loaded.message.job.id,
    time: Math.max(0, ui.audio.currentTime),
    cue: loaded.cue,
    playing: !ui.audio.paused,
    ended: ui.audio.ended,
  });
}

// ---- display -------------------------------------------------------------------------------------------------------

function updateTime(time: number, total: number): void {
  ui.timeCurrent.textContent = formatTime(time);
  ui.timeTotal.textContent = formatTime(total);
  ui.seek.max = String(total > 0 ? total : 0);
  ui.seek.value = String(time);
  ui.seek.setAttribute('aria-valuetext', `${spokenTime(time)} of ${spokenTime(total)}`);
  ui.seek.style.setProperty('--progress', total > 0 ? `${Math.min(100, (time / total) * 100)}%` : '0%');
}

function updatePlayButton(): void {
  const playing = !ui.audio.paused;
  ui.play.classList.toggle('playing', playing);
  ui.play.setAttribute('aria-label', playing ? 'Pause' : 'Play');
  ui.play.title = playing ? 'Pause (Space or K)' : 'Play (Space or K)';
}

function updateVolume(): void {
  const muted = ui.audio.muted || ui.audio.volume === 0;
  ui.mute.classList.toggle('muted', muted);
  ui.mute.setAttribute('aria-pressed', String(ui.audio.muted));
  ui.mute.setAttribute('aria-label', ui.audio.muted ? 'Unmute' : 'Mute');
  ui.mute.title = ui.audio.muted ? 'Unmute (M)' : 'Mute (M)';
  ui.volume.value = String(ui.audio.volume);
  ui.volume.style.setProperty('--progress', `${Math.round(ui.audio.volume * 100)}%`);
  ui.volume.setAttribute('aria-valuetext', `${Math.round(ui.audio.volume * 100)}%${ui.audio.muted ? ', muted' : ''}`);
}

function highlight(index: number, scroll: boolean): void {
  if (!loaded) return;
  if (index !== loaded.cue) {
    const old = loaded.cueElements[loaded.cue];
    old?.classList.remove('current');
    old?.removeAttribute('aria-current');
    loaded.cue = index;
    const now = loaded.cueElements[index];
    if (now) {
      now.classList.add('current');
      now.setAttribute('aria-current', 'true');
      if (scroll) scrollIntoTranscript(now);
    }
  }
  const chapter = indexAt(loaded.message.chapters, loaded.message.cues[index]?.start ?? currentTime());
  if (chapter !== loaded.chapter) {
    loaded.chapterElements[loaded.chapter]?.removeAttribute('aria-current');
    loaded.chapter = chapter;
    loaded.chapterElements[chapter]?.setAttribute('aria-current', 'true');
  }
}

function scrollIntoTranscript(target: HTMLElement): void {
  if (Date.now() < followPausedUntil) return;
  const box = ui.transcript.getBoundingClientRect();
  const line = target.getBoundingClientRect();
  const margin = Math.min(48, box.height / 4);
  if (line.top >= box.top + margin && line.bottom <= box.bottom - margin) return;
  // Not scrollIntoView: that also scrolls the page itself, pushing the controls out of sight.
  const top = line.top - box.top + ui.transcript.scrollTop - box.height / 2 + line.height / 2;
  ui.transcript.scrollTo({ top: Math.max(0, top), behavior: reducedMotion.matches ? 'auto' : 'smooth' });
}

// ---- events --------------------------------------------------------------------------------------------------------

ui.audio.addEventListener('loadedmetadata', () => {
  if (!loaded) return;
  loaded.ready = true;
  ui.audio.playbackRate = loaded.message.rate;
  if (loaded.pendingSeek !== undefined) {
    ui.audio.currentTime = Math.min(loaded.pendingSeek, Math.max(0, duration() - 0.5));
    loaded.pendingSeek = undefined;
  }
  updateTime(ui.audio.currentTime, duration());
  if (resumeAfterLoad) {
    resumeAfterLoad = false;
    void play();
  }
});
ui.audio.addEventListener('timeupdate', () => {
  if (!loaded?.ready) return;
  const time = ui.audio.currentTime;
  updateTime(time, duration());
  const before = loaded.cue;
  highlight(indexAt(loaded.message.cues, time), true);
  postProgress(before !== loaded.cue);
});
ui.audio.addEventListener('play', () => {
  updatePlayButton();
  ui.error.hidden = true;
  followPausedUntil = 0;
  postProgress(true);
});
ui.audio.addEventListener('pause', () => {
  updatePlayButton();
  postProgress(true);
});
ui.audio.addEventListener('ended', () => {
  updatePlayButton();
  announce('Finished');
  postProgress(true);
});
ui.audio.addEventListener('seeked', () => postProgress(true));
ui.audio.addEventListener('ratechange', () => {
  const rate = ui.audio.playbackRate;
  if (loaded) loaded.message.rate = rate;
  showRate(rate);
  announce(`Speed ${rateLabel(rate)}`);
  post({ type: 'settings', rate: clampRate(rate), volume: ui.audio.volume, muted: ui.audio.muted });
});
ui.audio.addEventListener('volumechange', () => {
  updateVolume();
  post({ type: 'settings', rate: clampRate(ui.audio.playbackRate), volume: ui.audio.volume, muted: ui.audio.muted });
});
ui.audio.addEventListener('error', () => {
  if (!loaded || !ui.audio.getAttribute('src')) return;
  const error = ui.audio.error;
  showPlaybackError(error?.message || `media error ${error?.code ?? 'unknown'}`);
});

ui.play.addEventListener('click', togglePlay);
ui.back.addEventListener('click', () => skip(-SKIP_SECONDS));
ui.forward.addEventListener('click', () => skip(SKIP_SECONDS));
ui.seek.addEventListener('input', () => seekTo(Number(ui.seek.value)));
ui.rate.addEventListener('change', () => setRate(Number(ui.rate.value)));
ui.volume.addEventListener('input', () => {
  ui.audio.volume = Number(ui.volume.value);
  if (ui.audio.volume > 0) ui.audio.muted = false;
  updateVolume();
});
ui.mute.addEventListener('click', toggleMute);
ui.saveAs.addEventListener('click', () => {
  if (loaded) post({ type: 'action', action: 'saveAs', jobId: loaded.message.job.id });
});
ui.openSource.addEventListener('click', () => {
  if (loaded) post({ type: 'action', action: 'openSource', jobId: loaded.message.job.id });
});
ui.cues.addEventListener('click', (event) => {
  const target = event.target instanceof Element ? event.target.closest<HTMLElement>('.cue') : null;
  const index = Number(target?.dataset.index);
  const cue = loaded?.message.cues[index];
  // A click that ends a text selection is the reader copying text, not asking to jump.
  if (!cue || (window.getSelection()?.toString() ?? '') !== '') return;
  seekTo(cue.start, `Sentence ${index + 1}`);
});
for (const type of ['wheel', 'touchmove'] as const) {
  ui.transcript.addEventListener(
    type,
    () => {
      followPausedUntil = Date.now() + 4_000;
    },
    { passive: true },
  );
}

function isEditable(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLInputElement || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement
  );
}

document.addEventListener('keydown', (event) => {
  if (!loaded || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
  const target = event.target;
  const onControl = isEditable(target) || target instanceof HTMLButtonElement;
  let handled = true;
  switch (event.key) {
    case ' ':
      // Space on a focused button presses that button.
      if (onControl) return;
      togglePlay();
      break;
    case 'k':
    case 'K':
      if (isEditable(target)) return;
      togglePlay();
      break;
    case 'j':
    case 'J':
      if (isEditable(target)) return;
      skip(-SKIP_SECONDS);
      break;
    case 'l':
    case 'L':
      if (isEditable(target)) return;
      skip(SKIP_SECONDS);
      break;
    case 'ArrowLeft':
    case 'ArrowRight':
      // The seek and volume sliders and the speed list use the arrows themselves.
      if (isEditable(target)) return;
      skip(event.key === 'ArrowLeft' ? -SKIP_SECONDS : SKIP_SECONDS);
      break;
    case 'ArrowUp':
    case 'ArrowDown':
      if (isEditable(target)) return;
      stepSentence(event.key === 'ArrowUp' ? -1 : 1);
      break;
    case '[':
    case ']':
      setRate(stepRate(ui.audio.playbackRate, event.key === ']' ? 1 : -1));
      break;
    case 'm':
    case 'M':
      if (isEditable(target)) return;
      toggleMute();
      break;
    case 'Home':
      if (isEditable(target)) return;
      seekTo(0, 'Start');
      break;
    default:
      handled = false;
  }
  if (handled) event.preventDefault();
});

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const message = event.data;
  if (!isHostMessage(message)) return;
  switch (message.type) {
    case 'load':
      showJob(message);
      return;
    case 'unavailable':
      showUnavailable(message);
      return;
    case 'part':
      if (live && live.jobId === message.jobId) acceptPart(live, message.part, true);
      return;
    case 'queue':
      showQueue(message.items);
      return;
    case 'control':
      togglePlay();
      return;
  }
});

// Positions are saved by the extension from progress messages; one last report when the page goes away.
window.addEventListener('pagehide', () => postProgress(true));

for (const rate of PLAYBACK_RATES) ui.rate.add(new Option(rateLabel(rate), String(rate)));
// After a reload the extension revives the panel from this state; keep it even before the first message.
const previous = vscode.getState();
if (isPlayerPageState(previous)) vscode.setState(previous);
post({ type: 'ready' });
