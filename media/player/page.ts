// What every part of the player page shares: the VS Code API, the page's elements, and posting to the extension.
import type { PageMessage, PlayerPageState } from '../../src/webview/protocol';

interface VsCodeApi {
  postMessage(message: PageMessage): void;
  getState(): unknown;
  setState(state: PlayerPageState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

export const vscode = acquireVsCodeApi();

function element<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`The player page has no #${id}`);
  return found;
}

export const ui = {
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
  sleep: element('sleep', HTMLSelectElement),
  sleepMinutes: element('sleep-minutes', HTMLInputElement),
  sleepLeft: element('sleep-left', HTMLSpanElement),
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

export function post(message: PageMessage): void {
  vscode.postMessage(message);
}

/** Says something to screen readers (the page's live region). */
export function announce(text: string): void {
  ui.announcer.textContent = text;
}
