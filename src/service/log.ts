// One LogOutputChannel for the whole extension, written through tagged loggers (`[engine]`, `[jobs]`, `[job 1a2b]`).
// Everything passes the redactor first, so that the API key and anything shaped like a credential never reach it.
import type * as vscode from 'vscode';
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

export class ExtensionLog {
  /** Secrets added here (the API key, the engine token) are masked in every line. */
  readonly redactor = new Redactor();

  constructor(readonly channel: vscode.LogOutputChannel) {}

  logger(tag: string): Logger {
    const write = (level: Level, message: string) => {
      const line = `[${tag}] ${this.redactor.redact(message)}`;
      this.channel[level](line);
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
