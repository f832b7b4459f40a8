// The Jobs view: a thin TreeDataProvider over the JobTracker (the model). `contextValue` drives the item menus in
// package.json; a click plays a finished job or shows why one failed.
import * as vscode from 'vscode';
import { Commands } from '../command-ids';
import { Disposable } from '../disposable';
import type { JobTracker } from '../jobs/job-tracker';
import type { ListeningQueue } from '../jobs/listening-queue';
import type { JobRecord } from '../jobs/types';
import { age, contextValue, duration, modelLabel, startedAt, stateIcon, statusLabel } from './labels';
import { escapeMarkdown } from './safe-text';

export class JobsTreeProvider extends Disposable implements vscode.TreeDataProvider<JobRecord> {
  private readonly changed = this.register(new vscode.EventEmitter<JobRecord | undefined>());
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly jobs: JobTracker,
    private readonly queue: ListeningQueue,
  ) {
    super();
    this.register(jobs.onDidChange(() => this.changed.fire(undefined)));
    this.register(queue.onDidChange(() => this.changed.fire(undefined)));
    // Ages ("3 min ago") change with time alone.
    const clock = setInterval(() => this.changed.fire(undefined), 60_000);
    this.register({ dispose: () => clearInterval(clock) });
  }

  getChildren(element?: JobRecord): JobRecord[] {
    return element ? [] : this.jobs.all();
  }

  getParent(): undefined {
    return undefined;
  }

  getTreeItem(job: JobRecord): vscode.TreeItem {
    const item = new vscode.TreeItem(job.title, vscode.TreeItemCollapsibleState.None);
    item.id = job.id;
    item.iconPath = stateIcon(job);
    const place = this.queue.items().indexOf(job.id);
    // `+inQueue` keeps the `job.<state>` prefix the menus match on, and adds Remove from Queue.
    item.contextValue = place === -1 ? contextValue(job) : `${contextValue(job)}+inQueue`;
    const parts = [modelLabel(job.modelId), statusLabel(job)];
    if (place !== -1) parts.unshift(place === 0 ? 'Up next' : `Queued #${place + 1}`);
    if (job.status === 'succeeded' && job.durationS !== undefined) parts[1] = duration(job.durationS);
    parts.push(age(job.createdAt));
    // Jobs of the same title (the same page converted twice, with another voice) are told apart by model and time.
    if (this.jobs.all().some((other) => other.id !== job.id && other.title === job.title))
      parts.push(startedAt(job.createdAt));
    item.description = parts.join(' · ');
    item.tooltip = tooltip(job);
    item.accessibilityInformation = {
      label: `${job.title}, ${modelLabel(job.modelId)}, ${statusLabel(job)}, ${age(job.createdAt)}`,
    };
    if (job.status === 'succeeded' && job.files) {
      item.command = { command: Commands.openPlayer, title: 'Open Player', arguments: [job] };
    } else if (job.status === 'failed' && job.error?.code !== 'cancelled') {
      item.command = { command: Commands.showJobError, title: 'Show Why the Job Failed', arguments: [job] };
    }
    return item;
  }
}

function tooltip(job: JobRecord): vscode.MarkdownString {
  const lines = [
    `**${escapeMarkdown(job.title)}**`,
    '',
    `${modelLabel(job.modelId)} · ${escapeMarkdown(statusLabel(job))} · started ${escapeMarkdown(new Date(job.createdAt).toLocaleString())}`,
  ];
  if (job.source.url) lines.push('', escapeMarkdown(job.source.url));
  if (job.durationS !== undefined) lines.push('', `Length: ${duration(job.durationS)}`);
  if (job.error?.message) lines.push('', `$(error) ${escapeMarkdown(job.error.message)}`);
  else if (job.lastMessage) lines.push('', `_${escapeMarkdown(job.lastMessage)}_`);
  lines.push(
    '',
    `Job ${escapeMarkdown(job.id)} on ${job.service === 'local' ? 'the local engine' : escapeMarkdown(job.service)}`,
  );
  // Not trusted (no command links run) and no HTML; every outside string above went through escapeMarkdown.
  const tip = new vscode.MarkdownString(lines.join('\n'), true);
  tip.supportHtml = false;
  return tip;
}
