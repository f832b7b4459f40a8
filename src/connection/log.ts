// One LogOutputChannel for the whole extension, written through tagged loggers (`[engine]`, `[jobs]`, `[job 1a2b]`).
// Everything passes the redactor first, so that the API key and anything shaped like a credential never reach it.
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
const JOB_LOG_SCHEME = 'article-audio-log';

export class ExtensionLog implements vscode.TextDocumentContentProvider {
  /** Secrets added here (the API key, the engine token) are masked in every line. */
  readonly redactor = new Redactor();
  private readonly recent: string[] = [];

  constructor(readonly channel: vscode.LogOutputChannel) {}

  /** Serves the read-only documents of one job's lines (`article-audio-log:/<job id>.log`). */
  register(): vscode.Disposable {
    return vscode.workspace.registerTextDocumentContentProvider(JOB_LOG_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const jobId = decodeURIComponent(uri.path.replace(/^\//, '').replace(/\.log$/, ''));
    const lines = this.linesOf(jobId);
    return lines.length > 0
      ? `${lines.join('\n')}\n`
      : `No log lines of job ${jobId} in this window (lines of earlier sessions are in the Article Audio output).\n`;
  }

  /** The lines that name this job (its id, or the `[job …]` tag of its stream's log events), oldest first. */
  linesOf(jobId: string): string[] {
    const tag = `[job ${jobId.length > 12 ? jobId.slice(-8) : jobId}]`;
    return this.recent.filter((line) => line.includes(jobId) || line.includes(tag));
  }

  /** Opens the job's own lines beside the editor. */
  async showJobLines(jobId: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: JOB_LOG_SCHEME, path: `/${encodeURIComponent(jobId)}.log` });
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, {
      preview: true,
      preserveFocus: true,
      viewColumn: vscode.ViewColumn.Beside,
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
