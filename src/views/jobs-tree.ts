// The Jobs view: a thin TreeDataProvider over the JobTracker (the model). `contextValue` drives the item menus in
// package.json; a click plays a finished job or shows why one failed.
import * as vscode from 'vscode';
import { Commands } from '../command-ids';
import type { JobTracker } from '../jobs/job-tracker';
import type { JobRecord } from '../jobs/types';
import { age, contextValue, duration, modelLabel, stateIcon, statusLabel } from './labels';
import { escapeMarkdown } from './safe-text';

export class JobsTreeProvider implements vscode.TreeDataProvider<JobRecord>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<JobRecord | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];
  /** Ages ("3 min ago") change with time alone. */
  private readonly clock = setInterval(() => this.changed.fire(undefined), 60_000);

  constructor(private readonly jobs: JobTracker) {
    this.subscriptions = [jobs.onDidChange(() => this.changed.fire(undefined)), this.changed];
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
    item.contextValue = contextValue(job);
    const parts = [modelLabel(job.modelId), statusLabel(job)];
    if (job.status === 'succeeded' && job.durationS !== undefined) parts[1] = duration(job.durationS);
    parts.push(age(job.createdAt));
    item.description = parts.join(' · ');
    item.tooltip = tooltip(job);
    item.accessibilityInformation = { label: `${job.title}, ${modelLabel(job.modelId)}, ${statusLabel(job)}, ${age(job.createdAt)}` };
    if (job.status === 'succeeded' && job.files) {
      item.command = { command: Commands.openPlayer, title: 'Open Player', arguments: [job] };
    } else if (job.status === 'failed') {
      item.command = { command: Commands.showLog, title: 'Show Log' };
    }
    return item;
  }

  dispose(): void {
    clearInterval(this.clock);
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}

function tooltip(job: JobRecord): vscode.MarkdownString {
  const lines = [`**${escapeMarkdown(job.title)}**`, '', `${modelLabel(job.modelId)} · ${escapeMarkdown(statusLabel(job))} · started ${escapeMarkdown(new Date(job.createdAt).toLocaleString())}`];
  if (job.source.url) lines.push('', escapeMarkdown(job.source.url));
  if (job.durationS !== undefined) lines.push('', `Length: ${duration(job.durationS)}`);
  if (job.error?.message) lines.push('', `$(error) ${escapeMarkdown(job.error.message)}`);
  else if (job.lastMessage) lines.push('', `_${escapeMarkdown(job.lastMessage)}_`);
  lines.push('', `Job ${escapeMarkdown(job.id)} on ${job.service === 'local' ? 'the local engine' : escapeMarkdown(job.service)}`);
  // Not trusted (no command links run) and no HTML; every outside string above went through escapeMarkdown.
  const tip = new vscode.MarkdownString(lines.join('\n'), true);
  tip.supportHtml = false;
  return tip;
}
