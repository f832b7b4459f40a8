// One LogOutputChannel for the whole extension, written through tagged loggers (`[engine]`, `[jobs]`, `[job 1a2b]`).
// Everything passes the redactor first, so that the API key and anything shaped like a credential never reach it.
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import { Redactor } from '../api/index';

export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  log(level: Level, message: string): void;
  /** A logger whose lines carry another component tag. */
  child(tag: string): Logger;
}

/** Lines kept in memory for Show Why the Job Failed (the channel itself cannot be read back or filtered). */
const KEPT_LINES = 5000;
export const JOB_LOG_SCHEME = 'article-audio-log';
/** A failed job's lines are kept on disk (for Show Why the Job Failed after a reload): at most this many lines… */
const KEPT_JOB_LINES = 400;
/** …for at most this many jobs (the oldest files go). */
const KEPT_JOB_FILES = 200;

export class ExtensionLog implements vscode.TextDocumentContentProvider {
  /** Secrets added here (the API key, the engine token) are masked in every line. */
  readonly redactor = new Redactor();
  private readonly recent: string[] = [];

  /** Where failed jobs' lines are kept across reloads (unset: in memory only). */
  private folder: string | undefined;

  constructor(readonly channel: vscode.LogOutputChannel) {}

  /** Keeps failed jobs' lines in this folder (the extension's global storage), so they outlive the window. */
  keepFailedJobsIn(folder: string): void {
    this.folder = folder;
  }

  /** Writes a job's lines to its file (a failed job: its log must still be there after a reload). */
  async keepJobLines(jobId: string): Promise<void> {
    const folder = this.folder;
    const lines = this.linesOf(jobId).slice(-KEPT_JOB_LINES);
    if (!folder || lines.length === 0) return;
    await mkdir(folder, { recursive: true, mode: 0o700 });
    // The id is the service's: a hash names the file, whatever characters the id has.
    await writeFile(path.join(folder, jobFileName(jobId)), `${lines.join('\n')}\n`, { mode: 0o600 });
    await this.prune(folder);
  }

  private async prune(folder: string): Promise<void> {
    const names = (await readdir(folder)).filter((name) => name.endsWith('.log'));
    if (names.length <= KEPT_JOB_FILES) return;
    const dated = await Promise.all(
      names.map(async (name) => ({
        name,
        at: (await stat(path.join(folder, name)).catch(() => undefined))?.mtimeMs ?? 0,
      })),
    );
    dated.sort((a, b) => a.at - b.at);
    for (const { name } of dated.slice(0, dated.length - KEPT_JOB_FILES)) {
      await rm(path.join(folder, name), { force: true });
    }
  }

  /** Serves the read-only documents of one job's lines (`article-audio-log:/<job id>.log`). */
  register(): vscode.Disposable {
    return vscode.workspace.registerTextDocumentContentProvider(JOB_LOG_SCHEME, this);
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const jobId = decodeURIComponent(uri.path.replace(/^\//, '').replace(/\.log$/, ''));
    const lines = this.linesOf(jobId);
    if (lines.length > 0) return `${lines.join('\n')}\n`;
    // Not in this window: the lines kept when it failed, in an earlier window.
    const kept = this.folder
      ? await readFile(path.join(this.folder, jobFileName(jobId)), 'utf8').catch(() => undefined)
      : undefined;
    return (
      kept ??
      `No log lines of job ${jobId} are kept (only failed jobs' lines outlive a reload; the rest are in the Article Audio output of the window that ran it).\n`
    );
  }

  /** The lines that name this job (its id, or the `[job …]` tag of its stream's log events), oldest first. */
  linesOf(jobId: string): string[] {
    const tag = `[job ${jobId.length > 12 ? jobId.slice(-8) : jobId}]`;
    return this.recent.filter((line) => line.includes(jobId) || line.includes(tag));
  }

  /** Opens the job's own lines beside the editor. */
  async showJobLines(jobId: string): Promise<void> {
    await this.keepJobLines(jobId).catch(() => undefined);
    const uri = vscode.Uri.from({ scheme: JOB_LOG_SCHEME, path: `/${encodeURIComponent(jobId)}.log` });
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, {
      preview: true,
      preserveFocus: true,
      viewColumn: logColumn(),
    });
  }

  logger(tag: string): Logger {
    const write = (level: Level, message: string) => {
      const line = `[${tag}] ${this.redactor.redact(message)}`;
      this.channel[level](line);
      this.recent.push(`${new Date().toISOString()} ${level.padEnd(5)} ${line}`);
      if (this.recent.length > KEPT_LINES) this.recent.splice(0, this.recent.length - KEPT_LINES);
    };
    return {
      trace: (m) => write('trace', m),
      debug: (m) => write('debug', m),
      info: (m) => write('info', m),
      warn: (m) => write('warn', m),
      error: (m) => write('error', m),
      log: write,
      child: (child) => this.logger(child),
    };
  }
}

function jobFileName(jobId: string): string {
  return `${createHash('sha256').update(jobId).digest('hex').slice(0, 32)}.log`;
}

/**
 * Where a job's lines open: the column already showing a job's log, else another existing column (the player's or
 * a second editor's), and only with one column a new one beside it. Never a third or fourth column.
 */
function logColumn(): vscode.ViewColumn {
  const groups = vscode.window.tabGroups.all;
  const withLog = groups.find((group) =>
    group.tabs.some((tab) => tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === JOB_LOG_SCHEME),
  );
  if (withLog) return withLog.viewColumn;
  if (groups.length < 2) return vscode.ViewColumn.Beside;
  const active = vscode.window.tabGroups.activeTabGroup;
  return (groups.filter((group) => group !== active).at(-1) ?? active).viewColumn;
}
