// One status bar item that owns its state: hidden while nothing happens; `$(sync~spin) 42% Title (+2)` while jobs
// run; an error colour after a failure until the user looks (clicks) or starts another job. Click: the Jobs view.
import * as vscode from 'vscode';
import { Commands } from '../command-ids';
import { Disposable } from '../disposable';
import type { JobTracker } from '../jobs/job-tracker';
import type { JobRecord } from '../jobs/types';
import { modelLabel, percent, statusLabel } from './labels';
import { commandLink, escapeMarkdown, plainLabel } from './safe-text';

const MAX_TITLE = 30;

/** Which engine new jobs go to (ServiceConnection). */
export interface EngineInUse {
  engineDescription(): string;
  readonly onDidChange: vscode.Event<unknown>;
}

export class JobStatusBar extends Disposable {
  private readonly item = this.register(
    vscode.window.createStatusBarItem('articleAudio.status', vscode.StatusBarAlignment.Left, 50),
  );
  private failure: JobRecord | undefined;
  private ready: JobRecord | undefined;
  /** What the player sounds now: shown instead of the last finished job, so the item names what you hear. */
  private sounding: { id: string; title: string } | undefined;
  private readyTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly jobs: JobTracker,
    private readonly engine: EngineInUse,
  ) {
    super();
    this.item.name = 'Article Audio';
    for (const subscription of [
      engine.onDidChange(() => this.render()),
      jobs.onDidChange(() => this.render()),
      jobs.onDidFinish(({ job }) => {
        if (job.status === 'failed' && job.error?.code !== 'cancelled') this.failure = job;
        else if (job.status === 'succeeded') this.showReady(job);
        this.render();
      }),
      { dispose: () => this.readyTimer && clearTimeout(this.readyTimer) },
    ]) {
      this.register(subscription);
    }
    this.render();
  }

  /** The player started or stopped sounding a job (PlayerController.onDidChangeSounding). */
  setSounding(job: { id: string; title: string } | undefined): void {
    this.sounding = job;
    this.render();
  }

  /** The user opened the jobs view: the failure has been seen. */
  acknowledge(): void {
    this.failure = undefined;
    this.render();
  }

  /** What the item shows now (for tests and the activation log). */
  get state(): { visible: boolean; text: string; tooltip: string; error: boolean } {
    const tooltip = this.item.tooltip;
    return {
      visible: this.visible,
      text: this.item.text,
      tooltip: typeof tooltip === 'string' ? tooltip : (tooltip?.value ?? ''),
      error: this.item.backgroundColor !== undefined,
    };
  }

  private visible = false;

  private render(): void {
    const running = this.jobs.unfinished();
    this.item.command = Commands.showJobs;
    // Trusted for our own commands only; outside text (titles, log lines, errors) is escaped with escapeMarkdown.
    const tooltip = new vscode.MarkdownString('', true);
    tooltip.supportHtml = false;
    tooltip.isTrusted = {
      enabledCommands: [
        Commands.showJobs,
        Commands.showLog,
        Commands.cancelJob,
        Commands.openPlayer,
        Commands.togglePlayback,
      ],
    };
    if (running.length > 0) {
      this.failure = undefined;
      const [first] = running.sort((a, b) => (b.progress ?? 0) - (a.progress ?? 0));
      if (!first) return;
      const playing = first.playingWhileConverting ? ' $(unmute) playing while converting' : '';
      const progress =
        (first.status === 'processing' && first.progress !== undefined
          ? ` ${percent(first.progress)}`
          : first.status === 'queued'
            ? ' queued'
            : '') + playing;
      const more = running.length > 1 ? ` (+${running.length - 1})` : '';
      this.item.text = `$(sync~spin)${progress} ${shorten(first.title)}${more}`;
      this.item.backgroundColor = undefined;
      this.item.accessibilityInformation = {
        label: `Article Audio: ${running.length} job${running.length === 1 ? '' : 's'} running; ${first.title} ${statusLabel(first)}`,
      };
      tooltip.appendMarkdown(`**Article Audio**: ${running.length} job${running.length === 1 ? '' : 's'} running\n\n`);
      for (const job of running.slice(0, 5)) {
        tooltip.appendMarkdown(
          `- $(sync~spin) ${escapeMarkdown(job.title)} (${modelLabel(job.modelId)}): ${escapeMarkdown(statusLabel(job))}${job.lastMessage ? ` — _${escapeMarkdown(job.lastMessage)}_` : ''} ${commandLink('$(debug-stop) Cancel', Commands.cancelJob, [job.id])}\n`,
        );
      }
      tooltip.appendMarkdown(`\n[Show Jobs](command:${Commands.showJobs}) · [Show Log](command:${Commands.showLog})`);
      this.show(tooltip);
      return;
    }
    if (this.failure) {
      const job = this.failure;
      this.item.text = `$(error) ${shorten(job.title)} failed`;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      this.item.accessibilityInformation = { label: `Article Audio: ${job.title} failed` };
      tooltip.appendMarkdown(
        `**${escapeMarkdown(job.title)}** failed${job.error?.code ? ` (${escapeMarkdown(job.error.code)})` : ''}\n\n${escapeMarkdown(job.error?.message ?? '')}\n\n[Show Jobs](command:${Commands.showJobs}) · [Show Log](command:${Commands.showLog})`,
      );
      this.show(tooltip);
      return;
    }
    if (this.sounding) {
      const job = this.sounding;
      this.item.text = `$(unmute) ${shorten(job.title)}`;
      this.item.backgroundColor = undefined;
      this.item.command = { title: 'Show Player', command: Commands.openPlayer, arguments: [job.id] };
      this.item.accessibilityInformation = { label: `Article Audio: playing ${job.title}` };
      tooltip.appendMarkdown(
        `Playing **${escapeMarkdown(job.title)}**\n\n${commandLink('$(debug-pause) Pause', Commands.togglePlayback, [])} · ${commandLink('$(eye) Show Player', Commands.openPlayer, [job.id])} · [Show Jobs](command:${Commands.showJobs})`,
      );
      this.show(tooltip);
      return;
    }
    if (this.ready) {
      const job = this.ready;
      this.item.text = `$(unmute) ${shorten(job.title)}`;
      this.item.backgroundColor = undefined;
      this.item.accessibilityInformation = { label: `Article Audio: ${job.title} is ready to play` };
      tooltip.appendMarkdown(
        `**${escapeMarkdown(job.title)}** is ready\n\n${commandLink('$(play) Play', Commands.openPlayer, [job.id])} · [Show Jobs](command:${Commands.showJobs})`,
      );
      this.show(tooltip);
      return;
    }
    this.item.hide();
    this.visible = false;
  }

  private show(tooltip: vscode.MarkdownString): void {
    // The remote address is outside text (a setting a workspace can set): escaped like any other.
    tooltip.appendMarkdown(`\n\n---\n\nUsing the ${escapeMarkdown(this.engine.engineDescription())}`);
    this.item.tooltip = tooltip;
    this.item.show();
    this.visible = true;
  }

  private showReady(job: JobRecord): void {
    this.ready = job;
    if (this.readyTimer) clearTimeout(this.readyTimer);
    this.readyTimer = setTimeout(() => {
      this.ready = undefined;
      this.render();
    }, 60_000);
  }
}

/** The status bar text renders `$(icon)`: a title is outside text. */
function shorten(title: string): string {
  return plainLabel(title.length > MAX_TITLE ? `${title.slice(0, MAX_TITLE - 1)}…` : title);
}
