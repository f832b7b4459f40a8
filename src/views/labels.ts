// Words and icons for jobs, shared by the tree and the status bar.
import * as vscode from 'vscode';
import type { JobRecord } from '../jobs/types';
import { modelLabel } from '../protocol';
import { plainLabel } from './safe-text';

export { modelLabel };

export function statusLabel(job: JobRecord): string {
  switch (job.status) {
    case 'queued':
      return 'Queued';
    case 'processing': {
      const done = job.progress !== undefined ? `${percent(job.progress)}` : 'Processing';
      return job.playingWhileConverting ? `${done}, playing while converting` : done;
    }
    case 'succeeded':
      return job.files ? 'Ready' : 'Downloading';
    case 'failed':
      return job.error?.code === 'cancelled' ? 'Cancelled' : 'Failed';
    default:
      return `Unknown state "${job.status}"`;
  }
}

/** Ended: succeeded with its files downloaded, or failed (cancelled included). */
export function isFinished(job: JobRecord): boolean {
  return (job.status === 'succeeded' && job.files !== undefined) || job.status === 'failed';
}

export function stateIcon(job: JobRecord): vscode.ThemeIcon {
  switch (job.status) {
    case 'queued':
      return new vscode.ThemeIcon('clock');
    case 'processing':
      return new vscode.ThemeIcon('sync~spin');
    case 'succeeded':
      return job.files
        ? new vscode.ThemeIcon('pass-filled', new vscode.ThemeColor('testing.iconPassed'))
        : new vscode.ThemeIcon('cloud-download');
    case 'failed':
      return job.error?.code === 'cancelled'
        ? new vscode.ThemeIcon('circle-slash')
        : new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed'));
    default:
      return new vscode.ThemeIcon('question');
  }
}

/** `job.<state>` for `when` clauses of menus (`viewItem =~ /^job\.succeeded/`); unknown states are `job.unknown`. */
export function contextValue(job: JobRecord): string {
  const known = ['queued', 'processing', 'succeeded', 'failed'].includes(job.status) ? job.status : 'unknown';
  if (job.status === 'succeeded' && !job.files) return 'job.downloading';
  // A running job with parts here can be played already (menus match `.playable`).
  return known === 'processing' && (job.parts?.length ?? 0) > 0 ? 'job.processing.playable' : `job.${known}`;
}

export function percent(progress: number): string {
  return `${Math.round(Math.max(0, Math.min(1, progress)) * 100)}%`;
}

export function age(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  return days === 1 ? 'yesterday' : `${days} days ago`;
}

export function duration(seconds: number): string {
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0
    ? `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`
    : `${m}:${String(s).padStart(2, '0')}`;
}

/** When a job was started, short: "14:05" today, "Nov 21, 14:05" before (tells apart jobs with the same title). */
export function startedAt(iso: string, now = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const time = date.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
  return date.toDateString() === now.toDateString()
    ? time
    : `${date.toLocaleDateString('en-US', { month: 'short', day: 'numeric' })}, ${time}`;
}

/** A job as a quick pick item: its title, then model, state and start time, so that same titles are told apart. */
export function jobLabel(job: JobRecord): { label: string; description: string } {
  return {
    label: plainLabel(job.title),
    description: `${modelLabel(job.modelId)} · ${statusLabel(job)} · ${startedAt(job.createdAt)}`,
  };
}
