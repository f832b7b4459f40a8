// The audio player: one webview panel that plays a finished job's cached MP3 with its transcript, switches between
// jobs, remembers where each was left, goes on with the listening queue, and is restored by a serializer after a
// reload. This file is the panel's lifecycle and what plays; what the page is given for a job is player-load.ts,
// feeding it a converting job's parts is player-live.ts, the page's inbox page-port.ts. The page itself is
// media/player/main.ts; messages are typed and checked on both sides (./protocol).
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { Commands, ContextKeys, Views } from '../command-ids';
import type { PlayableJobs } from '../jobs/types';
import { modelLabel, startedAt } from '../views/labels';
import { plainLabel } from '../views/safe-text';
import { ListeningMemory } from './listening-memory';
import { PagePort } from './page-port';
import { LiveFeed, type Playing } from './player-live';
import { renderPlayerHtml } from './player-html';
import { type PageContext, cuesOf, exists, filesKey, loadMessage, sourceLabel } from './player-load';
import { type PageAction, type PageMessage, isPageMessage, isPlayerPageState } from './protocol';
import { cueAtOffset } from './play-from';
import { ReadAlong } from './read-along';
import { matchCues } from './text-match';
import { formatTime } from './transcript';

export interface PlayerController extends vscode.Disposable {
  /** Opens (or reveals and switches) the one player panel on this job; with no id, asks with a quick pick among jobs.playable(). */
  open(jobId?: string, options?: OpenOptions): Promise<void>;
  /**
   * Play from Here: plays the newest job made from this document from the sentence at `offset` (the cursor). False
   * when no playable job has that sentence (then the caller converts from there).
   */
  playFrom(document: vscode.TextDocument, offset: number): Promise<boolean>;
  /** A job the user asked to hear as soon as it can play (Play from Here converting): it opens and plays then. */
  playWhenReady(jobId: string): void;
  /** Plays or pauses what the player shows; false when it shows nothing. */
  togglePlayback(): boolean;
  /** The job the player shows, if any. */
  readonly current: string | undefined;
  /** What the player is sounding now (undefined: nothing plays), for the status bar. */
  readonly onDidChangeSounding: vscode.Event<SoundingJob | undefined>;
}

export interface OpenOptions {
  /** An open nobody asked for (a job's first part came, or it finished): it never replaces the article shown. */
  preserveFocus?: boolean;
  autoplay?: boolean;
  /** Where to start (seconds), instead of where the listener left the job. */
  at?: number;
}

export interface SoundingJob {
  id: string;
  title: string;
}

/** The listening queue as the player uses it (src/jobs/listening-queue.ts). */
export interface PlayerQueue {
  items(): readonly string[];
  has(id: string): boolean;
  add(...ids: string[]): void;
  remove(id: string): void;
  takeNext(state: (id: string) => 'ready' | 'pending' | 'gone'): string | undefined;
  onDidChange(listener: () => void): { dispose(): void };
}

/**
 * How the player tells the user something: the extension's Notifier (src/notify.ts), which logs each notice and makes
 * outside text (titles, paths, error messages) safe to show.
 */
export interface PlayerNotices {
  info(text: string, actions?: { title: string; run: () => unknown }[]): void;
  warn(text: string, fixes?: { title: string; run: () => unknown }[]): void;
  error(context: string, error: unknown): void;
}

export function registerPlayer(
  context: vscode.ExtensionContext,
  jobs: PlayableJobs,
  log: vscode.LogOutputChannel,
  notices: PlayerNotices,
  queue: PlayerQueue,
): PlayerController {
  return new Player(context, jobs, log, notices, queue);
}

/** While playing, the position is written to globalState at most this often (and always on pause, switch and close). */
const SAVE_EVERY_MS = 5_000;

class Player implements PlayerController {
  private readonly memory: ListeningMemory;
  private readonly readAlong = new ReadAlong();
  private readonly disposables: vscode.Disposable[] = [];
  private panel: vscode.WebviewPanel | undefined;
  private panelDisposables: vscode.Disposable[] = [];
  private port: PagePort | undefined;
  private playing: Playing | undefined;
  /** Feeds the page the parts of a job it plays while it converts (player-live.ts). */
  private readonly live: LiveFeed;
  /** Counts calls of show(), so that a slow one does not overwrite a later one. */
  private showCount = 0;
  /** An article ended while the next queued job was still converting: it plays as soon as it is ready. */
  private waitingForNext = false;
  /** Jobs that were put in the listening queue instead of replacing the article shown (each is announced once). */
  private readonly announced = new Set<string>();
  /** Jobs to open and play as soon as they can (playWhenReady). */
  private readonly wanted = new Set<string>();
  private readonly soundingEmitter = new vscode.EventEmitter<SoundingJob | undefined>();
  readonly onDidChangeSounding = this.soundingEmitter.event;
  /** What onDidChangeSounding last said, to fire only on a change. */
  private soundingKey = '';
  private readonly audioRoot: vscode.Uri;
  private readonly mediaRoot: vscode.Uri;

  constructor(
    context: vscode.ExtensionContext,
    private readonly jobs: PlayableJobs,
    private readonly log: vscode.LogOutputChannel,
    private readonly notices: PlayerNotices,
    private readonly queue: PlayerQueue,
  ) {
    this.memory = new ListeningMemory(context.globalState);
    this.live = new LiveFeed({
      jobs,
      log,
      readAlong: this.readAlong,
      playing: () => this.playing,
      port: () => this.port,
      pageContext: () => this.pageContext(),
      show: (jobId) => this.show(jobId),
      showUnavailable: (job, reason, actions) => this.showUnavailable(job, reason, actions),
      stopPlaying: () => (this.playing = undefined),
    });
    this.audioRoot = vscode.Uri.joinPath(context.globalStorageUri, 'audio');
    this.mediaRoot = vscode.Uri.joinPath(context.extensionUri, 'media');
    this.disposables.push(
      this.readAlong,
      this.soundingEmitter,
      vscode.window.registerWebviewPanelSerializer(Views.player, {
        deserializeWebviewPanel: (panel, state) => this.revive(panel, state),
      }),
    );
    const subscription = jobs.onDidChange(() => void this.onJobsChanged());
    const queued = queue.onDidChange(() => this.postQueue());
    this.disposables.push({ dispose: () => subscription.dispose() }, { dispose: () => queued.dispose() });
  }

  get current(): string | undefined {
    return this.playing?.job.id;
  }

  togglePlayback(): boolean {
    if (!this.panel || !this.port || !this.playing) return false;
    this.port.post({ type: 'control', command: 'togglePlay' });
    return true;
  }

  async open(jobId?: string, options: OpenOptions = {}): Promise<void> {
    const id = jobId ?? (await this.pickJob());
    if (id === undefined) return;
    if (this.wanted.delete(id)) options = { ...options, preserveFocus: false, autoplay: true };
    const current = this.playing;
    if (options.preserveFocus && this.panel && current && !current.ended && current.job.id !== id) {
      // An open in the background (a job's first part came, or it finished) never replaces the article the player
      // holds, playing or paused: the new job waits its turn in the listening queue. Only an explicit action (Play,
      // Play Now, a click in the Jobs view) replaces it.
      this.queueInstead(id);
      return;
    }
    if (this.panel) {
      this.panel.reveal(undefined, options.preserveFocus);
      // Already on this job: showing it again would restart the page and stop the audio.
      if (current?.job.id === id) {
        if (options.at !== undefined) this.port?.post({ type: 'control', command: 'playFrom', time: options.at });
        return;
      }
    } else {
      // Beside the editor when there is one, so the read-along highlight in the source stays visible.
      const column = vscode.window.activeTextEditor ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
      const panel = vscode.window.createWebviewPanel(
        Views.player,
        'Article Audio',
        { viewColumn: column, preserveFocus: options.preserveFocus ?? false },
        {
          enableScripts: true,
          // Audio must go on playing while the reader looks at another tab.
          retainContextWhenHidden: true,
          enableFindWidget: true,
          localResourceRoots: [this.mediaRoot, this.audioRoot],
        },
      );
      this.adopt(panel);
    }
    await this.show(id, options.autoplay, options.at);
  }

  async playFrom(document: vscode.TextDocument, offset: number): Promise<boolean> {
    const uri = document.uri.toString();
    // Newest first: the latest conversion of the document has its latest wording.
    const jobs = this.jobs.playable().filter((job) => job.source.documentUri === uri);
    const text = document.getText();
    for (const job of jobs) {
      const cues = await cuesOf(job, this.log);
      if (cues.length === 0) continue;
      const range = job.source.range;
      const start = range ? document.offsetAt(new vscode.Position(range.startLine, range.startCharacter)) : 0;
      const index = cueAtOffset(
        matchCues(
          text,
          cues.map((cue) => cue.text),
          { start, end: text.length },
        ),
        offset,
        start,
      );
      const cue = index === undefined ? undefined : cues[index];
      if (!cue) continue;
      this.log.info(`player: play from here: ${job.id} from sentence ${index! + 1} at ${formatTime(cue.start)}`);
      await this.open(job.id, { autoplay: true, at: cue.start });
      return true;
    }
    return false;
  }

  playWhenReady(jobId: string): void {
    this.wanted.add(jobId);
    void this.onJobsChanged();
  }

  /** Puts a job that would have replaced the article shown into the listening queue, and says so once. */
  private queueInstead(id: string): void {
    if (!this.queue.has(id)) this.queue.add(id);
    if (this.announced.has(id)) return;
    this.announced.add(id);
    const job = this.jobs.get(id);
    const title = job?.title ?? 'The new audio';
    const state = job?.status === 'succeeded' ? 'is ready' : 'is converting';
    this.log.info(`player: ${id} queued behind ${this.playing?.job.id ?? 'nothing'} instead of replacing it`);
    this.notices.info(`"${title}" ${state}. It is in your listening queue and plays after the current article.`, [
      { title: 'Play Now', run: () => this.open(id, { autoplay: true }) },
    ]);
  }

  dispose(): void {
    this.rememberPosition();
    void this.memory.flush();
    this.panel?.dispose();
    for (const disposable of this.disposables) disposable.dispose();
  }

  /** Restores the panel VS Code kept across a reload, on the job it was playing. */
  private async revive(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    if (this.panel) {
      // A second panel cannot come back while one is open (there is only ever one); keep the open one.
      panel.dispose();
      return;
    }
    panel.webview.options = { enableScripts: true, localResourceRoots: [this.mediaRoot, this.audioRoot] };
    this.adopt(panel);
    if (isPlayerPageState(state)) {
      await this.show(state.jobId);
    } else {
      this.showUnavailable(
        { id: 'none', title: 'Article Audio' },
        'The player was closed before it had a job to play.',
        ['pickJob', 'showJobs'],
      );
    }
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    void vscode.commands.executeCommand('setContext', ContextKeys.playerOpen, true);
    panel.iconPath = vscode.Uri.joinPath(this.mediaRoot, 'icon-activity.svg');
    const webview = panel.webview;
    const nonce = randomBytes(16).toString('base64');
    const port = new PagePort(webview);
    this.port = port;
    webview.html = renderPlayerHtml({
      cspSource: webview.cspSource,
      nonce,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(this.mediaRoot, 'build', 'player.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(this.mediaRoot, 'player.css')).toString(),
      artworkUri: webview.asWebviewUri(vscode.Uri.joinPath(this.mediaRoot, 'icon.png')).toString(),
    });
    this.panelDisposables = [
      webview.onDidReceiveMessage((message: unknown) => void this.onPageMessage(message)),
      panel.onDidDispose(() => {
        this.rememberPosition();
        if (this.playing?.liveParts !== undefined) this.jobs.setPlayingWhileConverting(this.playing.job.id, false);
        void this.memory.flush();
        this.readAlong.follow(undefined, []);
        for (const disposable of this.panelDisposables) disposable.dispose();
        this.panelDisposables = [];
        this.panel = undefined;
        this.port = undefined;
        this.playing = undefined;
        this.waitingForNext = false;
        this.announceSounding();
        void vscode.commands.executeCommand('setContext', ContextKeys.playerOpen, false);
      }),
    ];
  }

  private async show(jobId: string, autoplay = false, at?: number): Promise<void> {
    this.rememberPosition();
    this.waitingForNext = false;
    // A queued job opened (by hand, or by the queue going on) is being heard: it leaves the queue.
    this.queue.remove(jobId);
    const ticket = ++this.showCount;
    const job = this.jobs.get(jobId);
    if (!job) {
      this.playing = undefined;
      this.announceSounding();
      this.readAlong.follow(undefined, []);
      this.showUnavailable({ id: jobId, title: 'Article Audio' }, 'This job is no longer in the list of jobs.', [
        'pickJob',
        'showJobs',
      ]);
      return;
    }
    const loadedMessage = await loadMessage(job, this.pageContext());
    const message =
      at !== undefined && loadedMessage.type === 'load' ? { ...loadedMessage, position: at } : loadedMessage;
    // The panel may have been closed, or switched to another job, while the files were read.
    if (!this.panel || !this.port || ticket !== this.showCount) return;
    if (message.type === 'unavailable') {
      this.playing = undefined;
      this.announceSounding();
      this.readAlong.follow(undefined, []);
      this.panel.title = job.title;
      this.port.post(message);
      return;
    }
    if (this.playing?.liveParts !== undefined && this.playing.job.id !== job.id)
      this.jobs.setPlayingWhileConverting(this.playing.job.id, false);
    this.playing = {
      job,
      filesKey: filesKey(job),
      durationS: message.durationS,
      time: message.position,
      lastSaved: Date.now(),
      sounding: false,
      ...(message.live ? { liveParts: message.live.parts.length } : {}),
      ...(message.live?.ended ? { liveEnd: message.live.ended.state } : {}),
    };
    if (!message.live) this.jobs.setPlayingWhileConverting(job.id, false);
    this.announceSounding();
    this.readAlong.follow(job, message.cues);
    this.panel.title = job.title;
    this.port.post(autoplay ? { ...message, autoplay: true } : message);
    this.postQueue();
    this.log.info(
      `player: playing ${job.id} from ${formatTime(message.position)} (${message.cues.length} sentences, ${message.chapters.length} chapters)`,
    );
  }

  /** What the load messages need of the panel (player-load.ts). */
  private pageContext(): PageContext {
    return { webview: this.panel?.webview, memory: this.memory, log: this.log };
  }

  private showUnavailable(job: { id: string; title: string }, reason: string, actions: PageAction[]): void {
    if (!this.panel || !this.port) return;
    this.panel.title = job.title;
    this.port.post({ type: 'unavailable', job, reason, actions });
  }

  private async onPageMessage(message: unknown): Promise<void> {
    if (!isPageMessage(message)) {
      this.log.warn('player: ignored a message from the page that does not follow the protocol');
      return;
    }
    await this.handle(message);
  }

  private async handle(message: PageMessage): Promise<void> {
    switch (message.type) {
      case 'ready': {
        const reloaded = this.port?.markReady() ?? false;
        if (reloaded && this.playing) await this.show(this.playing.job.id);
        else this.postQueue();
        return;
      }
      case 'progress': {
        const playing = this.playing;
        if (!playing || playing.job.id !== message.jobId) return;
        playing.time = message.time;
        playing.sounding = message.playing && !message.ended;
        playing.ended = message.ended;
        this.announceSounding();
        if (playing.liveParts !== undefined && playing.liveEnd === undefined)
          this.jobs.setPlayingWhileConverting(playing.job.id, playing.sounding);
        this.readAlong.showCue(message.cue);
        if (!message.playing || message.ended || Date.now() - playing.lastSaved >= SAVE_EVERY_MS)
          this.rememberPosition();
        if (message.playing) this.waitingForNext = false;
        // Played again after its end (or sought back and played): at its next end the queue goes on again.
        if (message.playing && !message.ended) playing.advanced = false;
        // The end of a finished job's audio (not of the parts heard so far): the listening queue goes on, unless the
        // sleep timer stopped playback there.
        const whole = playing.liveParts === undefined || playing.liveEnd === 'finished';
        if (message.ended && whole && !playing.advanced) {
          playing.advanced = true;
          if (message.sleep) this.log.info(`player: the sleep timer stopped playback at the end of ${playing.job.id}`);
          else await this.playNextQueued();
        }
        return;
      }
      case 'next':
        await this.skipToNext();
        return;
      case 'word':
        if (this.playing?.job.id === message.jobId) this.readAlong.showWord(message.cue, message.word);
        return;
      case 'settings':
        this.memory.savePreferences(message);
        return;
      case 'needPart':
        await this.live.sendPartAudio(message.jobId, message.index);
        return;
      case 'action':
        await this.runAction(message.action, message.jobId);
        return;
      case 'error':
        this.log.warn(`player: ${message.jobId}: the page could not play the audio: ${message.message}`);
        // A file deleted under the player shows as a media error; say so plainly instead.
        if (
          this.playing?.job.id === message.jobId &&
          this.playing.job.files &&
          !(await exists(this.playing.job.files.audio))
        ) {
          await this.show(message.jobId);
        }
        return;
    }
  }

  private async runAction(action: PageAction, jobId: string): Promise<void> {
    switch (action) {
      case 'saveAs':
        await vscode.commands.executeCommand(Commands.saveAudioAs, jobId);
        return;
      case 'openSource':
        return this.openSource(jobId);
      case 'pickJob':
        return this.open(undefined);
      case 'retryJob':
        await vscode.commands.executeCommand(Commands.retryJob, jobId);
        return;
      case 'removeJob':
        await vscode.commands.executeCommand(Commands.removeJob, jobId);
        return;
      case 'showJobs':
        await vscode.commands.executeCommand(Commands.showJobs);
        return;
      case 'playNow':
        return this.open(jobId, { autoplay: true });
      case 'removeFromQueue':
        this.queue.remove(jobId);
        return;
    }
  }

  /** What a queued job is to the player: playable now, still converting, or never going to play. */
  private queuedState(id: string): 'ready' | 'pending' | 'gone' {
    const job = this.jobs.get(id);
    if (!job || job.status === 'failed') return 'gone';
    return job.status === 'succeeded' && job.files ? 'ready' : 'pending';
  }

  /** Plays the next job of the listening queue, or waits for it if it is still converting. */
  private async playNextQueued(): Promise<void> {
    const next = this.queue.takeNext((id) => this.queuedState(id));
    if (next) {
      this.log.info(`player: the listening queue goes on with ${next}`);
      await this.open(next, { preserveFocus: true, autoplay: true });
      return;
    }
    this.waitingForNext = this.queue.items().length > 0;
  }

  /** The listener asked for the next article (a media key, the OS media controls): it replaces the one playing. */
  private async skipToNext(): Promise<void> {
    if (!this.panel) return;
    const next = this.queue.takeNext((id) => this.queuedState(id));
    if (!next) return;
    this.log.info(`player: next in the listening queue on request: ${next}`);
    await this.show(next, true);
  }

  /** Tells the page what is up next (every queued job but the one playing). */
  private postQueue(): void {
    if (!this.port) return;
    const items = this.queue
      .items()
      .filter((id) => id !== this.playing?.job.id)
      .flatMap((id) => {
        const job = this.jobs.get(id);
        return job && job.status !== 'failed'
          ? [{ id, title: job.title, ready: this.queuedState(id) === 'ready' }]
          : [];
      });
    this.port.post({ type: 'queue', items });
  }

  private async openSource(jobId: string): Promise<void> {
    const uri = this.jobs.get(jobId)?.source.documentUri;
    if (!uri) return;
    try {
      const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
      const column = this.panel?.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
      const editor = await vscode.window.showTextDocument(document, { viewColumn: column, preserveFocus: false });
      const range = this.readAlong.currentRange(document);
      if (range) editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    } catch (error) {
      this.notices.error(`Could not open the source of this audio (${vscode.Uri.parse(uri).fsPath})`, error);
    }
  }

  /** Tells the status bar what plays now, when that changed (a job switched, paused, ended, or was renamed). */
  private announceSounding(): void {
    const playing = this.playing;
    const sounding = playing?.sounding ? { id: playing.job.id, title: playing.job.title } : undefined;
    const key = sounding ? `${sounding.id}\n${sounding.title}` : '';
    if (key === this.soundingKey) return;
    this.soundingKey = key;
    this.soundingEmitter.fire(sounding);
  }

  private rememberPosition(): void {
    const playing = this.playing;
    if (!playing) return;
    playing.lastSaved = Date.now();
    this.memory.savePosition(playing.job.id, playing.time, playing.durationS);
  }

  private async onJobsChanged(): Promise<void> {
    this.postQueue();
    for (const id of this.wanted) {
      const job = this.jobs.get(id);
      if (!job || job.status === 'failed') this.wanted.delete(id);
      else if (job.files || (job.parts?.length ?? 0) > 0) await this.open(id);
    }
    if (this.waitingForNext && this.panel) {
      const head = this.queue.items()[0];
      if (head === undefined) this.waitingForNext = false;
      else if (this.queuedState(head) !== 'pending') await this.playNextQueued();
    }
    const playing = this.playing;
    if (!playing || !this.panel) return;
    const job = this.jobs.get(playing.job.id);
    if (!job) {
      this.rememberPosition();
      this.showUnavailable(
        { id: playing.job.id, title: playing.job.title },
        'This job was removed from the list of jobs.',
        ['pickJob', 'showJobs'],
      );
      this.playing = undefined;
      this.announceSounding();
      this.readAlong.follow(undefined, []);
      return;
    }
    if (playing.liveParts !== undefined && playing.liveEnd === undefined) {
      playing.job = job;
      this.announceSounding();
      await this.live.update(playing, job);
      if (this.panel && this.panel.title !== job.title) this.panel.title = job.title;
      return;
    }
    if (filesKey(job) !== playing.filesKey) {
      // The finished file replaces what the page plays: it moves to it at the same position.
      await this.show(job.id);
      return;
    }
    playing.job = job;
    this.announceSounding();
    if (this.panel.title !== job.title) this.panel.title = job.title;
  }

  private async pickJob(): Promise<string | undefined> {
    const playable = this.jobs.playable();
    if (playable.length === 0) {
      this.notices.info('No finished job to play yet. Convert a selection, a document or a URL first.');
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      playable.map((job) => ({
        label: plainLabel(job.title),
        // Model and start time tell apart jobs of the same title (a page converted twice).
        description: [
          job.durationS !== undefined ? formatTime(job.durationS) : undefined,
          modelLabel(job.modelId),
          startedAt(job.createdAt),
        ]
          .filter(Boolean)
          .join(' · '),
        detail: plainLabel(sourceLabel(job) ?? ''),
        id: job.id,
      })),
      {
        title: 'Article Audio: Play',
        placeHolder: 'Choose the audio to play',
        matchOnDescription: true,
        matchOnDetail: true,
      },
    );
    return picked?.id;
  }
}
