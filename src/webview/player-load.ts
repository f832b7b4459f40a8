// What the player page is given for a job: the load message of a finished job (its cached MP3, transcript and
// chapters, where the listener left it) or of a running one (its parts so far), the header's job info, a part's
// times and sentences, and how a job that ended early is described. Read from the job's cached files; no panel
// state (player-panel.ts holds that).
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import type { CachedPart, JobRecord } from '../jobs/types';
import type { ListeningMemory } from './listening-memory';
import type { LiveEnd, LivePart, LoadMessage, PlayerJobInfo, UnavailableMessage } from './protocol';
import { type ChapterMark, type TranscriptCue, formatTime, laterCue, parseChapters, parseWebVtt } from './transcript';

/** What building a load message needs of the panel: its webview (for file addresses), the memory, the log. */
export interface PageContext {
  webview: vscode.Webview | undefined;
  memory: ListeningMemory;
  log: vscode.LogOutputChannel;
}

export async function loadMessage(job: JobRecord, page: PageContext): Promise<LoadMessage | UnavailableMessage> {
  if (!job.files && job.parts && job.parts.length > 0) return liveLoadMessage(job, job.parts, page);
  const files = job.files;
  if (!files || !(await exists(files.audio))) {
    const reason = files
      ? `The audio of this job is no longer on disk (its cache folder ${path.dirname(files.audio)} was removed).`
      : 'This job has no audio yet.';
    if (files) page.log.warn(`player: ${job.id}: ${files.audio} is missing`);
    return {
      type: 'unavailable',
      job: { id: job.id, title: job.title },
      reason,
      actions: ['retryJob', 'removeJob', 'pickJob'],
    };
  }
  let cues: TranscriptCue[] = [];
  let transcriptNote: string | undefined;
  if (files.transcript) {
    try {
      cues = parseWebVtt(await readFile(files.transcript, 'utf8'));
      if (cues.length === 0) transcriptNote = 'The transcript of this job is empty.';
    } catch (error) {
      transcriptNote = 'The transcript file of this job is missing, so there is no read-along.';
      page.log.warn(`player: ${job.id}: cannot read the transcript: ${(error as Error).message}`);
    }
  } else {
    transcriptNote = 'The service sent no transcript for this job, so there is no read-along.';
  }
  let chapters: ChapterMark[] = [];
  let durationS = job.durationS;
  if (files.chapters) {
    try {
      const parsed = parseChapters(await readFile(files.chapters, 'utf8'));
      chapters = parsed.chapters;
      durationS ??= parsed.durationS;
    } catch (error) {
      page.log.warn(`player: ${job.id}: cannot read the chapters: ${(error as Error).message}`);
    }
  }
  const webview = page.webview;
  const preferences = page.memory.preferences();
  const message: LoadMessage = {
    type: 'load',
    job: jobInfo(job),
    audioUrl: webview
      ? webview.asWebviewUri(vscode.Uri.file(files.audio)).toString()
      : vscode.Uri.file(files.audio).toString(),
    cues,
    chapters,
    ...(durationS !== undefined ? { durationS } : {}),
    position: page.memory.position(job.id),
    ...preferences,
    ...(transcriptNote ? { transcriptNote } : {}),
  };
  return message;
}

/** A running job: its parts so far, played one after another while the rest is converted. */
async function liveLoadMessage(
  job: JobRecord,
  parts: CachedPart[],
  page: PageContext,
): Promise<LoadMessage | UnavailableMessage> {
  let live: LivePart[];
  try {
    live = await Promise.all(parts.map((part) => livePart(part)));
  } catch (error) {
    page.log.warn(`player: ${job.id}: cannot read its parts: ${(error as Error).message}`);
    return {
      type: 'unavailable',
      job: { id: job.id, title: job.title },
      reason: 'The parts of this job that were downloaded so far are no longer on disk.',
      actions: ['pickJob', 'showJobs'],
    };
  }
  const ended = job.status === 'failed' ? endedEarly(job, parts) : undefined;
  return {
    type: 'load',
    job: jobInfo(job),
    audioUrl: '',
    live: { parts: live, ...(ended ? { ended } : {}) },
    cues: live.flatMap((part) => part.cues),
    chapters: [],
    // Where the listener was, as for a finished job (the page keeps it within what has arrived).
    position: page.memory.position(job.id),
    ...page.memory.preferences(),
    transcriptNote: 'Still converting: the transcript grows as the audio arrives.',
  };
}

/** A job's sentences: its transcript, or while it runs, those of the parts so far. */
export async function cuesOf(job: JobRecord, log: vscode.LogOutputChannel): Promise<TranscriptCue[]> {
  try {
    if (job.files?.transcript) return parseWebVtt(await readFile(job.files.transcript, 'utf8'));
    if (!job.files && job.parts)
      return (await Promise.all(job.parts.map((part) => livePart(part)))).flatMap((p) => p.cues);
  } catch (error) {
    log.warn(`player: ${job.id}: cannot read its transcript: ${(error as Error).message}`);
  }
  return [];
}

/** What the page shows of a job in its header. */
export function jobInfo(job: JobRecord): PlayerJobInfo {
  return {
    id: job.id,
    title: job.title,
    model: job.modelId,
    sourceLabel: sourceLabel(job),
    hasSourceDocument: job.source.documentUri !== undefined,
  };
}

/** What the page learns of a part: its times and sentences (its bytes only when the page asks, sendPartAudio). */
export async function livePart(part: CachedPart): Promise<LivePart> {
  let cues: TranscriptCue[] = [];
  if (part.transcript) {
    try {
      cues = parseWebVtt(await readFile(part.transcript, 'utf8')).map((cue) => laterCue(cue, part.startS));
    } catch {
      // A part without its transcript still plays; the finished job brings the whole transcript.
    }
  }
  return { index: part.index, startS: part.startS, durationS: part.durationS, final: part.final, cues };
}

/** What the page says of a job that was cancelled or failed while it played its parts. */
export function endedEarly(job: JobRecord, parts: readonly CachedPart[]): LiveEnd {
  const last = parts[parts.length - 1];
  const converted = last ? formatTime(last.startS + last.durationS) : '0:00';
  const cancelled = job.error?.code === 'cancelled';
  const what = cancelled ? 'Conversion cancelled' : 'Conversion failed';
  return {
    state: cancelled ? 'cancelled' : 'failed',
    note:
      parts.length > 0
        ? `${what}: the ${converted} converted before plays; convert again for the rest.`
        : `${what} before any audio was converted.`,
    actions: ['retryJob'],
  };
}

export async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

export function filesKey(job: JobRecord): string {
  const files = job.files;
  return files ? [files.audio, files.transcript, files.chapters].join('\n') : '';
}

export function sourceLabel(job: JobRecord): string | undefined {
  if (job.source.url) {
    try {
      return new URL(job.source.url).hostname;
    } catch {
      return job.source.url;
    }
  }
  if (job.source.documentUri) {
    const name = path.posix.basename(vscode.Uri.parse(job.source.documentUri).path);
    return job.source.kind === 'selection' ? `selection in ${name}` : name;
  }
  return undefined;
}
