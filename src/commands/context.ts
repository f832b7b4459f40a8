// What every command factory gets (rust-analyzer's `Ctx`), and the way commands that act on a job find it: the tree
// item (a JobRecord), a job id (status bar links, other extensions), or nothing (the palette: a quick pick of the jobs
// it applies to).
import * as vscode from 'vscode';
import type { ApiKeyStore } from '../connection/api-key';
import type { ServiceConnection } from '../connection/connection';
import type { ExtensionLog, Logger } from '../connection/log';
import type { JobTracker } from '../jobs/job-tracker';
import type { ListeningQueue } from '../jobs/listening-queue';
import type { JobRecord } from '../jobs/types';
import type { Notifier } from '../notify';
import { jobLabel } from '../views/labels';
import type { JobStatusBar } from '../views/status-bar';
import type { PlayerController } from '../webview/player-panel';

export interface CommandContext {
  extension: vscode.ExtensionContext;
  jobs: JobTracker;
  /** What plays next (Play Next / Add to Queue; jobs made in parts queue themselves). */
  queue: ListeningQueue;
  connection: ServiceConnection;
  keys: ApiKeyStore;
  notifier: Notifier;
  log: Logger;
  extensionLog: ExtensionLog;
  channel: vscode.LogOutputChannel;
  statusBar: JobStatusBar;
  player: PlayerController;
}

/** A command's handler, made by a factory from the context. */
export type Command = (...args: never[]) => unknown;
export type CommandFactory = (ctx: CommandContext) => Command;

export type JobTarget = JobRecord | string | undefined;

export async function resolveJob(
  ctx: CommandContext,
  target: JobTarget,
  applies: (job: JobRecord) => boolean,
  none: string,
): Promise<JobRecord | undefined> {
  const id = typeof target === 'string' ? target : target?.id;
  if (id !== undefined) {
    const job = ctx.jobs.get(id);
    if (!job) ctx.notifier.warn(`Article Audio has no job ${id}; it may have been removed from the list.`);
    return job;
  }
  const candidates = ctx.jobs.all().filter(applies);
  if (candidates.length === 0) {
    ctx.notifier.warn(none);
    return undefined;
  }
  if (candidates.length === 1) return candidates[0];
  const picked = await vscode.window.showQuickPick(
    candidates.map((job) => ({ ...jobLabel(job), job })),
    { placeHolder: 'Choose a job', matchOnDescription: true },
  );
  return picked?.job;
}
