// Context keys that say which job commands can run now, so the Command Palette offers only those
// (package.json `menus.commandPalette` uses them in `when` clauses).
import * as vscode from 'vscode';
import { ContextKeys } from '../command-ids';
import type { ListeningQueue } from '../jobs/listening-queue';
import type { JobRecord } from '../jobs/types';

export interface JobList {
  all(): JobRecord[];
  playable(): JobRecord[];
  unfinished(): JobRecord[];
  readonly onDidChange: vscode.Event<JobRecord | undefined>;
}

export function trackJobContextKeys(jobs: JobList, queue: ListeningQueue): vscode.Disposable {
  const last = new Map<string, boolean>();
  const set = (key: string, value: boolean) => {
    if (last.get(key) === value) return;
    last.set(key, value);
    void vscode.commands.executeCommand('setContext', key, value);
  };
  const update = () => {
    const all = jobs.all();
    set(ContextKeys.hasJobs, all.length > 0);
    set(ContextKeys.hasRunningJobs, jobs.unfinished().length > 0);
    set(
      ContextKeys.hasFinishedJobs,
      all.some((job) => job.status === 'succeeded' || job.status === 'failed'),
    );
    set(ContextKeys.hasPlayableJobs, jobs.playable().length > 0);
    set(ContextKeys.hasQueue, queue.items().length > 0);
  };
  update();
  const onQueue = queue.onDidChange(update);
  const onJobs = jobs.onDidChange(update);
  return vscode.Disposable.from(onQueue, onJobs);
}
