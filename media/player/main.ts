// The player page inside the webview: plays the job's MP3, shows the transcript with the sentence being spoken, and
// reports progress to the extension (which remembers positions and highlights the source document). Every message
// from the extension is checked with the protocol's guards; job text is only ever set with textContent.
import {
  type HostMessage,
  type LiveEnd,
  type LiveEndMessage,
  type LivePart,
  type LoadMessage,
  type PageAction,
  type UpNextItem,
  PLAYBACK_RATES,
  SKIP_SECONDS,
  clampRate,
  isHostMessage,
  isPlayerPageState,
  stepRate,
} from '../../src/webview/protocol';
import { formatTime, indexAt, nextChangeAt, spokenTime } from '../../src/webview/transcript';
import { LiveStream } from './live';
import {
  clearMediaSession,
  handleMediaKey,
  setNextAvailable,
  setUpMediaSession,
  showMediaMetadata,
  showMediaState,
} from './media-session';
import { announce, post, ui, vscode } from './page';
import { SleepTimer } from './sleep-timer';
import { TranscriptKeys } from './transcript-keys';
import { TranscriptView } from './transcript-view';

interface Loaded {
  message: LoadMessage;
  /** Seconds to seek to once the audio's metadata is known. */
  pendingSeek: number | undefined;
  ready: boolean;
  lastPosted: number;
}

let loaded: Loaded | undefined;

let live: LiveStream | undefined;
/** Set when the finished file replaces the parts while playing: play on once it is loaded. */
let resumeAfterLoad = false;
/**
 * How the running job being played ended, once it has. Finished: the parts play on (they are the whole audio) and the
 * finished file is loaded the next time the job is opened, so the listener hears no gap at the switch.
 */
let liveEnded: LiveEnd | undefined;
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

function rateLabel(rate: number): string {
  return `${Number(rate.toFixed(2))}×`;
}

// ---- showing a job -------------------------------------------------------------------------------------------------

const transcript = new TranscriptView((chapter, index) =>
  seekTo(chapter.start, `Chapter ${index + 1}: ${chapter.title}`),
);
const transcriptKeys = new TranscriptKeys((index) => playFrom(index));
const sleepTimer = new SleepTimer(ui.audio);

function endLive(): void {
  liveEnded = undefined;
  delete ui.audio.dataset.liveEnded;
  delete ui.audio.dataset.liveEndedAt;
  delete ui.timeTotal.dataset.live;
  if (!live) return;
  live.stop();
  live = undefined;
}

function startLive(jobId: string, parts: LivePart[]): LiveStream {
  return new LiveStream(jobId, parts, {
    playhead: currentTime,
    requestPart: (index) => post({ type: 'needPart', jobId, index }),
    onError: showPlaybackError,
  });
}

/** A running job's next part: its audio goes on the stream, its sentences on the transcript. */
function addPart(target: LiveStream, part: LivePart): void {
  const added = target.accept(part);
  if (!loaded) return;
  // The total grows with each part: "converted so far" in the header and under the seek bar.
  showMeta();
  updateTime(currentTime(), duration());
  if (added.length === 0) return;
  loaded.message = { ...loaded.message, cues: [...loaded.message.cues, ...added] };
  transcript.grow(loaded.message.cues);
  highlight(indexAt(loaded.message.cues, currentTime()), false);
}

/**
 * The running job being played ended. Finished: its transcript, chapters and length replace what the parts brought,
 * and the audio plays on untouched. Cancelled or failed: what was converted plays to its end, and the note says so.
 */
function endOfJob(
  target: LiveStream,
  message: LiveEnd & Partial<Pick<LiveEndMessage, 'cues' | 'chapters' | 'durationS'>>,
): void {
  liveEnded = { state: message.state, note: message.note, actions: message.actions };
  // For tests and tools: how and when (the page's clock) the job ended while its parts played.
  ui.audio.dataset.liveEnded = message.state;
  ui.audio.dataset.liveEndedAt = String(performance.now());
  target.close();
  if (loaded && message.cues) {
    const scroll = ui.transcript.scrollTop;
    loaded.message = {
      ...loaded.message,
      cues: message.cues,
      chapters: message.chapters ?? loaded.message.chapters,
      ...(message.durationS !== undefined ? { durationS: message.durationS } : {}),
    };
    transcript.show(loaded.message.cues, loaded.message.chapters);
    ui.transcript.scrollTop = scroll;
    highlight(indexAt(loaded.message.cues, currentTime()), false);
  }
  showLiveState();
  updateTime(currentTime(), duration());
  if (message.state !== 'finished') announce(message.note);
}

/** The note under the player while it plays parts: still converting, or how the job ended, with its buttons. */
function showLiveState(): void {
  if (!loaded) return;
  const note = liveEnded?.note ?? loaded.message.transcriptNote;
  ui.transcriptNote.hidden = !note;
  ui.transcriptNote.textContent = note ?? '';
  ui.transcriptNote.dataset.liveState = liveEnded?.state ?? (live ? 'converting' : '');
  for (const action of liveEnded?.actions ?? []) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'secondary live-action';
    button.textContent = ACTION_LABELS[action];
    const jobId = loaded.message.job.id;
    button.addEventListener('click', () => post({ type: 'action', action, jobId }));
    ui.transcriptNote.append(' ', button);
  }
  showMeta();
}

/** The header line: model, length (marked "so far" while the job converts), source. */
function showMeta(): void {
  if (!loaded) return;
  const message = loaded.message;
  const converting = live !== undefined && !live.complete;
  const length = converting
    ? `${formatTime(live?.end ?? 0)} converted so far`
    : message.durationS !== undefined
      ? formatTime(message.durationS)
      : live
        ? formatTime(live.end)
        : undefined;
  ui.meta.textContent = [message.job.model, length, message.job.sourceLabel].filter(Boolean).join(' · ');
}

function showJob(message: LoadMessage): void {
  // The finished file of the job playing from its parts (only when the parts are not the whole audio): go on from the
  // same place, playing if it was.
  const switching =
    live !== undefined && live.jobId === message.job.id && !message.live && loaded?.message.job.id === message.job.id;
  const position = switching ? ui.audio.currentTime : message.position;
  // The listening queue went on to this job: it plays as the one before it did.
  resumeAfterLoad = (switching && !ui.audio.paused) || message.autoplay === true;
  ui.audio.pause();
  endLive();
  message = { ...message, position };
  loaded = {
    message,
    pendingSeek: message.position > 0 ? message.position : undefined,
    ready: false,
    lastPosted: 0,
  };
  vscode.setState({ jobId: message.job.id });
  ui.loading.hidden = true;
  ui.unavailable.hidden = true;
  ui.player.hidden = false;
  ui.error.hidden = true;

  ui.title.textContent = message.job.title;
  const duration = message.durationS;
  ui.openSource.hidden = !message.job.hasSourceDocument;

  // The finished file's transcript is the one that grew from the parts: the reader stays where they were in it.
  const transcriptScroll = ui.transcript.scrollTop;
  transcript.show(message.cues, message.chapters);
  if (switching) ui.transcript.scrollTop = transcriptScroll;
  ui.transcriptNote.hidden = !message.transcriptNote;
  ui.transcriptNote.textContent = message.transcriptNote ?? '';

  ui.audio.defaultPlaybackRate = message.rate;
  ui.audio.volume = message.volume;
  ui.audio.muted = message.muted;
  if (message.live) {
    live = startLive(message.job.id, message.live.parts);
    if (message.live.ended) endOfJob(live, message.live.ended);
  }
  showLiveState();
  ui.audio.src = live ? live.url : message.audioUrl;
  ui.audio.playbackRate = message.rate;
  ui.audio.load();
  showRate(message.rate);
  updateTime(message.position, duration ?? live?.end ?? 0);
  updateVolume();
  updatePlayButton();
  highlight(indexAt(message.cues, message.position), false);
  showMediaMetadata(message.job.title, document.body.dataset.artwork);
  showMediaState(ui.audio);
}

function addRateOption(rate: number): void {
  const option = new Option(rateLabel(rate), String(rate));
  const after = [...ui.rate.options].find((o) => Number(o.value) > rate);
  ui.rate.add(option, after ?? null);
  ui.rate.value = String(rate);
}

/** The listening queue under the transport: each job can be played now or taken out. Titles only as text. */
function showQueue(items: UpNextItem[]): void {
  ui.upNext.hidden = items.length === 0;
  setNextAvailable(items.some((item) => item.ready));
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
  endLive();
  ui.audio.removeAttribute('src');
  ui.audio.load();
  loaded = undefined;
  clearMediaSession();
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

/** The length shown: the audio's own, or while a job converts the end of the parts that arrived (never 0:00). */
function duration(): number {
  const known = ui.audio.duration;
  const fromAudio = Number.isFinite(known) && known > 0 ? known : 0;
  if (live) return Math.max(fromAudio, live.end);
  return fromAudio > 0 ? fromAudio : (loaded?.message.durationS ?? 0);
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
  transcript.follow();
  updateTime(target, duration());
  highlight(indexAt(loaded.message.cues, target), true);
  if (what) announce(`${what}, ${spokenTime(target)}`);
  postProgress(true);
}

/** Plays from the sentence at this index (the transcript's Enter). */
function playFrom(index: number): void {
  const cue = loaded?.message.cues[index];
  if (!cue) return;
  seekTo(cue.start, `Sentence ${index + 1}`);
  if (ui.audio.paused) void play();
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
    cue: transcript.cue,
    playing: !ui.audio.paused,
    ended: ui.audio.ended,
    ...(ui.audio.ended && sleepTimer.endsWithArticle ? { sleep: true } : {}),
  });
}

// ---- display -------------------------------------------------------------------------------------------------------

function updateTime(time: number, total: number): void {
  // While the job converts the total is what has been converted so far: marked so (a title, and "so far" for screen
  // readers), and it grows as parts come in.
  const soFar = live !== undefined && !live.complete;
  ui.timeCurrent.textContent = formatTime(time);
  ui.timeTotal.textContent = formatTime(total);
  if (soFar) ui.timeTotal.dataset.live = 'so-far';
  else delete ui.timeTotal.dataset.live;
  ui.timeTotal.title = soFar ? 'Converted so far; the job is still converting' : '';
  ui.seek.max = String(total > 0 ? total : 0);
  ui.seek.value = String(time);
  ui.seek.setAttribute(
    'aria-valuetext',
    `${spokenTime(time)} of ${spokenTime(total)}${soFar ? ' converted so far' : ''}`,
  );
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
  if (loaded) transcript.highlight(index, scroll, currentTime());
  transcriptKeys.follow(index);
}

/**
 * Marks the sentence and the word being spoken at `time`; the extension hears of a new sentence (progress) and of a
 * new word (the source editor marks it).
 */
function followAudio(time: number): void {
  if (!loaded?.ready) return;
  const before = transcript.cue;
  highlight(indexAt(loaded.message.cues, time), true);
  postProgress(before !== transcript.cue);
  if (transcript.highlightWord(time))
    post({ type: 'word', jobId: loaded.message.job.id, cue: transcript.cue, word: transcript.word });
}

/**
 * While playing, the word is followed at each change: a timer set for the next word or sentence start (timeupdate
 * comes only about four times a second). Not once a frame: a frame loop kept the page drawing 60 times a second for
 * the whole article, a few percent of a core for hours of listening; a word changes two or three times a second.
 */
let wordTimer: ReturnType<typeof setTimeout> | undefined;
/** After the last known start (a live job's next parts are not listed yet), look again this often. */
const FOLLOW_POLL_MS = 250;
/** And at least once a second whatever the next start (a long silence; the audio clock and the timer drift apart). */
const FOLLOW_MAX_MS = 1000;
function followWords(): void {
  clearTimeout(wordTimer);
  wordTimer = undefined;
  if (!loaded?.ready || ui.audio.paused) return;
  const time = ui.audio.currentTime;
  followAudio(time);
  const next = nextChangeAt(loaded.message.cues, time);
  const rate = ui.audio.playbackRate > 0 ? ui.audio.playbackRate : 1;
  // A few milliseconds late rather than early: an early timer would find no change and set itself again at once. At
  // least 20 ms: a playhead stalled just before a start (waiting for data) re-arms at most 50 times a second.
  const delay = next === undefined ? FOLLOW_POLL_MS : ((next - time) / rate) * 1000 + 5;
  wordTimer = setTimeout(followWords, Math.min(FOLLOW_MAX_MS, Math.max(20, delay)));
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
  showMediaState(ui.audio);
  if (resumeAfterLoad) {
    resumeAfterLoad = false;
    void play();
  }
});
ui.audio.addEventListener('timeupdate', () => {
  // The window of a running job's stream follows the playhead.
  live?.pump();
  if (!loaded?.ready) return;
  const time = ui.audio.currentTime;
  updateTime(time, duration());
  // Also while the page is hidden (no animation frames then) and after a seek while paused.
  followAudio(time);
});
ui.audio.addEventListener('play', () => {
  updatePlayButton();
  showMediaState(ui.audio);
  ui.error.hidden = true;
  transcript.follow();
  postProgress(true);
  followWords();
});
ui.audio.addEventListener('pause', () => {
  updatePlayButton();
  showMediaState(ui.audio);
  postProgress(true);
});
ui.audio.addEventListener('ended', () => {
  updatePlayButton();
  announce('Finished');
  postProgress(true);
  sleepTimer.articleEnded();
});
ui.audio.addEventListener('seeked', () => {
  showMediaState(ui.audio);
  postProgress(true);
  followWords();
});
ui.audio.addEventListener('seeking', () => live?.pump());
ui.audio.addEventListener('ratechange', () => {
  const rate = ui.audio.playbackRate;
  if (loaded) loaded.message.rate = rate;
  showRate(rate);
  showMediaState(ui.audio);
  announce(`Speed ${rateLabel(rate)}`);
  post({ type: 'settings', rate: clampRate(rate), volume: ui.audio.volume, muted: ui.audio.muted });
  followWords();
});
ui.audio.addEventListener('volumechange', () => {
  // The sleep timer's fade is not the listener's volume: neither shown nor saved.
  if (sleepTimer.fading) return;
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
function isEditable(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLInputElement || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement
  );
}

document.addEventListener('keydown', (event) => {
  if (!loaded || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
  // A keyboard's media keys, when they reach the page as keys (see media-session.ts).
  if (handleMediaKey(event.key)) {
    event.preventDefault();
    return;
  }
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
      if (live && live.jobId === message.jobId) addPart(live, message.part);
      return;
    case 'partAudio':
      if (!live || live.jobId !== message.jobId) return;
      if (message.bytes) live.receiveBytes(message.index, message.bytes);
      else showPlaybackError(message.error ?? `part ${message.index} of the audio is missing`);
      return;
    case 'liveEnd':
      if (live && live.jobId === message.jobId) endOfJob(live, message);
      return;
    case 'queue':
      showQueue(message.items);
      return;
    case 'control':
      if (message.command === 'playFrom') {
        seekTo(message.time, 'Playing from here');
        void play();
      } else {
        togglePlay();
      }
      return;
  }
});

// Positions are saved by the extension from progress messages; one last report when the page goes away.
window.addEventListener('pagehide', () => postProgress(true));

for (const rate of PLAYBACK_RATES) ui.rate.add(new Option(rateLabel(rate), String(rate)));
setUpMediaSession({
  play: () => {
    if (loaded && ui.audio.paused) void play();
  },
  pause: () => ui.audio.pause(),
  togglePlay,
  // Stop pauses where it is: the position is remembered like any other.
  stop: () => ui.audio.pause(),
  skip,
  seekTo: (time) => seekTo(time),
  next: () => {
    if (loaded) post({ type: 'next' });
  },
  previous: () => stepSentence(-1),
});
// After a reload the extension revives the panel from this state; keep it even before the first message.
const previous = vscode.getState();
if (isPlayerPageState(previous)) vscode.setState(previous);
post({ type: 'ready' });
