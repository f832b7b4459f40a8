// Every failure a user can cause or meet becomes one notification that says what happened and offers the fix.
import * as vscode from 'vscode';
import {
  ArticleAudioError,
  AuthenticationError,
  ConnectionError,
  JobFailedError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
} from './api/index';
import { Commands } from './command-ids';
import { KeyringUnavailableError } from './service/api-key';
import { MissingApiKeyError, OtherServiceError } from './service/connection';
import { EngineStartError } from './service/local-engine';
import type { Logger } from './service/log';
import type { Redactor } from './api/index';

export interface Fix {
  title: string;
  run: () => unknown;
}

export interface ShownError {
  message: string;
  actions: string[];
}

/** Shows errors with their fixes; remembers the last few (the tests read them, the log has them all). */
export class Notifier {
  readonly shown: ShownError[] = [];

  constructor(
    private readonly log: Logger,
    private readonly redactor: Redactor,
    private readonly readme: vscode.Uri,
  ) {}

  /**
   * Shows `error` with the fixes that fit it, plus `extra` (such as Retry). Returns at once: a command must not wait
   * for the user to close a notification (it would never finish while the notification stays open).
   */
  error(context: string, error: unknown, extra: Fix[] = []): void {
    const { message, fixes } = describe(error, this.readme);
    const text = this.redactor.redact(`${context}: ${message}`);
    this.log.error(text);
    const actions = [...extra, ...fixes, showLog];
    const seen = new Set<string>();
    const unique = actions.filter((fix) => !seen.has(fix.title) && seen.add(fix.title));
    this.remember({ message: text, actions: unique.map((fix) => fix.title) });
    this.offer(vscode.window.showErrorMessage(text, ...unique.map((fix) => fix.title)), unique);
  }

  /** Shows a warning with its fixes; returns at once, like error(). */
  warn(text: string, fixes: Fix[] = []): void {
    const safe = this.redactor.redact(text);
    this.log.warn(safe);
    this.remember({ message: safe, actions: fixes.map((fix) => fix.title) });
    this.offer(vscode.window.showWarningMessage(safe, ...fixes.map((fix) => fix.title)), fixes);
  }

  private offer(choice: Thenable<string | undefined>, fixes: Fix[]): void {
    void Promise.resolve(choice)
      .then((picked) => fixes.find((fix) => fix.title === picked)?.run())
      .catch((error: unknown) => this.log.error(this.redactor.redact(`A fix failed: ${error instanceof Error ? error.message : String(error)}`)));
  }

  private remember(entry: ShownError): void {
    this.shown.push(entry);
    if (this.shown.length > 100) this.shown.shift();
  }
}

const run = (command: string, ...args: unknown[]) => () => vscode.commands.executeCommand(command, ...args);
const showLog: Fix = { title: 'Show Log', run: run(Commands.showLog) };
const setKey: Fix = { title: 'Set API Key', run: run(Commands.setApiKey) };
const useLocal: Fix = { title: 'Use Local Engine', run: run(Commands.useLocalEngine) };

/** The fix buttons, one definition each, for callers that offer them with warn() or as extras of error(). */
export const Fixes = {
  showLog,
  setKey,
  useLocal,
  useRemote: { title: 'Use Remote Service…', run: run(Commands.useRemoteService) } satisfies Fix,
  retryJob: (jobId: string): Fix => ({ title: 'Retry', run: run(Commands.retryJob, jobId) }),
};
function troubleshooting(readme: vscode.Uri): Fix {
  return { title: 'Open Troubleshooting', run: () => vscode.commands.executeCommand('markdown.showPreview', readme) };
}

function describe(error: unknown, readme: vscode.Uri): { message: string; fixes: Fix[] } {
  if (error instanceof MissingApiKeyError) return { message: error.message, fixes: [setKey, useLocal] };
  if (error instanceof AuthenticationError) {
    return { message: `${error.message.replace(/\.?$/, '.')} Check the key with "Set API Key…".`, fixes: [setKey] };
  }
  if (error instanceof KeyringUnavailableError) return { message: error.message, fixes: [troubleshooting(readme)] };
  if (error instanceof RateLimitError) {
    const wait = error.retryAfterMs !== undefined ? ` Try again in ${Math.ceil(error.retryAfterMs / 1000)} s.` : '';
    return { message: `${error.message}${wait && !error.message.includes('again in') ? wait : ''}`, fixes: [] };
  }
  if (error instanceof ConnectionError || error instanceof TimeoutError) return { message: error.message, fixes: [useLocal] };
  if (error instanceof EngineStartError) return { message: `${error.message} See the log for the engine's own words.`, fixes: [] };
  if (error instanceof ValidationError || error instanceof NotFoundError || error instanceof ServerError || error instanceof JobFailedError) {
    return { message: error.message, fixes: [] };
  }
  if (error instanceof OtherServiceError) return { message: error.message, fixes: [] };
  if (error instanceof ArticleAudioError || error instanceof Error) return { message: error.message, fixes: [] };
  return { message: String(error), fixes: [] };
}
