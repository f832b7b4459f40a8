// Playing a job while it converts: the page gets the job's parts one after another as they arrive (their times and
// sentences; their bytes when its window asks), in order whatever the number of changes, and then how the job
// ended: finished (the parts play on and the finished transcript and chapters come; or, with parts left out, the
// finished file replaces them), or cancelled or failed (what was converted plays on, with a note). The panel
// (player-panel.ts) owns what plays; this feeds it.
import { readFile } from 'node:fs/promises';
import type * as vscode from 'vscode';
import type { JobRecord, PlayableJobs } from '../jobs/types';
import type { PagePort } from './page-port';
import { type PageContext, endedEarly, filesKey, livePart, loadMessage } from './player-load';
import type { HostMessage, LiveEnd, PageAction } from './protocol';
import type { ReadAlong } from './read-along';

export interface Playing {
  job: JobRecord;
  /** What the page was given, to notice when the job's files change. */
  filesKey: string;
  durationS?: number;
  time: number;
  lastSaved: number;
  /** Whether the page last reported the audio as playing. */
  sounding: boolean;
  /**
   * While the page plays the job from its parts: how many of them it was told of (it plays them until it is next
   * opened, or until the finished file is here when the parts are not the whole audio).
   */
  liveParts?: number;
  /** How the job the page plays from its parts ended, once the page was told. */
  liveEnd?: LiveEnd['state'];
  /** The queue already went on from this job (an `ended` report can come twice). */
  advanced?: boolean;
  /** The page last reported the audio as played to its end. */
  ended?: boolean;
}

/** What the feed needs of the panel: what plays now and where the page is, and how to show a job. */
export interface LiveHost {
  jobs: PlayableJobs;
  log: vscode.LogOutputChannel;
  readAlong: ReadAlong;
  playing(): Playing | undefined;
  port(): PagePort | undefined;
  pageContext(): PageContext;
  show(jobId: string): Promise<void>;
  showUnavailable(job: { id: string; title: string }, reason: string, actions: PageAction[]): void;
  /** The page plays nothing any more. */
  stopPlaying(): void;
}

export class LiveFeed {
  private partSending: Promise<void> = Promise.resolve();

  constructor(private readonly host: LiveHost) {}

  /**
   * The job the page plays from its parts changed: sends the parts it does not have, then, once the job has ended,
   * how. One sender at a time, so parts reach the page in order however many changes come in; the end of the job
   * goes the same way, after its last parts.
   */
  async update(playing: Playing, job: JobRecord): Promise<void> {
    const ended = (job.status === 'succeeded' && job.files !== undefined) || job.status === 'failed';
    this.partSending = this.partSending
      .then(() => this.sendNewParts(playing, job))
      .then(() =>
        ended && this.host.playing() === playing && playing.liveEnd === undefined
          ? this.endLive(playing, job)
          : undefined,
      )
      .catch((error: unknown) => this.host.log.warn(`player: ${job.id}: ${(error as Error).message}`));
    await this.partSending;
  }

  /** The bytes of a part the page's window needs (it holds none it has appended). */
  async sendPartAudio(jobId: string, index: number): Promise<void> {
    const playing = this.host.playing();
    if (!playing || playing.job.id !== jobId || playing.liveParts === undefined || !this.host.port()) return;
    const part = (this.host.jobs.get(jobId)?.parts ?? playing.job.parts ?? []).find((p) => p.index === index);
    let message: HostMessage;
    try {
      if (!part) throw new Error('the job has no such part');
      message = { type: 'partAudio', jobId, index, bytes: new Uint8Array(await readFile(part.audio)) };
    } catch (error) {
      this.host.log.warn(`player: ${jobId}: cannot read part ${index}: ${(error as Error).message}`);
      message = { type: 'partAudio', jobId, index, error: `part ${index} of the audio is no longer on disk` };
    }
    if (this.host.playing() === playing) this.host.port()?.post(message);
  }

  /**
   * The job the page plays from its parts ended. Finished with every part here: the page plays on from them and
   * takes the finished transcript and chapters (no reload, so no gap); the finished file is what the next open
   * loads. Finished with parts left out: the finished file replaces the parts at the same position. Cancelled or
   * failed: what was converted plays on, and the page says what happened and offers Convert Again.
   */
  private async endLive(playing: Playing, job: JobRecord): Promise<void> {
    if (!this.host.port()) return;
    const parts = job.parts ?? [];
    if (job.status === 'succeeded' && job.files) {
      const last = parts[parts.length - 1];
      const whole = last !== undefined && last.final && last.index === parts.length - 1;
      if (!whole) {
        await this.host.show(job.id);
        return;
      }
      const finished = await loadMessage(job, this.host.pageContext());
      const port = this.host.port();
      if (this.host.playing() !== playing || !port) return;
      if (finished.type === 'unavailable') {
        port.post(finished);
        return;
      }
      playing.filesKey = filesKey(job);
      playing.liveEnd = 'finished';
      if (finished.durationS !== undefined) playing.durationS = finished.durationS;
      this.host.jobs.setPlayingWhileConverting(job.id, false);
      this.host.readAlong.follow(job, finished.cues);
      port.post({
        type: 'liveEnd',
        jobId: job.id,
        state: 'finished',
        note: '',
        actions: [],
        cues: finished.cues,
        chapters: finished.chapters,
        ...(finished.durationS !== undefined ? { durationS: finished.durationS } : {}),
      });
      this.host.log.info(`player: ${job.id} finished while playing from its parts; the parts play on`);
      return;
    }
    const port = this.host.port();
    if (job.status !== 'failed' || !port) return;
    this.host.jobs.setPlayingWhileConverting(job.id, false);
    if (parts.length === 0) {
      this.host.stopPlaying();
      this.host.showUnavailable({ id: job.id, title: job.title }, endedEarly(job, parts).note, ['retryJob', 'pickJob']);
      return;
    }
    const ended = endedEarly(job, parts);
    playing.liveEnd = ended.state;
    port.post({ type: 'liveEnd', jobId: job.id, ...ended });
    this.host.log.info(`player: ${job.id} ${ended.state} while playing from its parts; what was converted plays on`);
  }

  /** Sends the parts the page does not have yet. */
  private async sendNewParts(playing: Playing, job: JobRecord): Promise<void> {
    const parts = this.host.jobs.get(job.id)?.parts ?? job.parts ?? [];
    for (;;) {
      const port = this.host.port();
      if (playing.liveParts === undefined || playing.liveParts >= parts.length) return;
      if (this.host.playing() !== playing || !port) return;
      const part = parts[playing.liveParts]!;
      playing.liveParts++;
      port.post({ type: 'part', jobId: job.id, part: await livePart(part) });
    }
  }
}
