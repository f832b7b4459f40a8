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
import { plainMessage } from './views/safe-text';

export interface Fix {
  title: string;
  run: () => unknown;
}

export interface ShownError {
  message: string;
  actions: string[];
}

/**
 * Every notification the extension shows goes through here (a lint rule forbids show*Message anywhere else), so that
 * each one is logged, redacted, and stripped of link syntax: messages quote outside text (page titles, addresses, a
 * service's error text, file names), and VS Code turns `[label](command:…)` in a message into a link that runs the
 * command. Remembers the last few (the tests read them; the log has them all).
 */
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
    const text = this.safe(`${context}: ${message}`);
    this.log.error(text);
    const actions = [...extra, ...fixes, showLog];
    const seen = new Set<string>();
    const unique = actions.filter((fix) => !seen.has(fix.title) && seen.add(fix.title));
    this.remember({ message: text, actions: unique.map((fix) => fix.title) });
    this.offer(vscode.window.showErrorMessage(text, ...unique.map((fix) => fix.title)), unique);
  }

  /** Shows a warning with its fixes; returns at once, like error(). */
  warn(text: string, fixes: Fix[] = []): void {
    const safe = this.safe(text);
    this.log.warn(safe);
    this.remember({ message: safe, actions: fixes.map((fix) => fix.title) });
    this.offer(vscode.window.showWarningMessage(safe, ...fixes.map((fix) => fix.title)), fixes);
  }

  /** Shows news (a job is ready, a key was saved) with its actions; returns at once. */
  info(text: string, actions: Fix[] = []): void {
    const safe = this.safe(text);
    this.log.info(safe);
    this.remember({ message: safe, actions: actions.map((fix) => fix.title) });
    this.offer(vscode.window.showInformationMessage(safe, ...actions.map((fix) => fix.title)), actions);
  }

  /** A modal question: resolves with the title of the button picked, or undefined when dismissed. */
  async confirm(text: string, detail: string | undefined, ...choices: string[]): Promise<string | undefined> {
    const safe = this.safe(text);
    this.remember({ message: safe, actions: choices });
    return vscode.window.showWarningMessage(safe, { modal: true, ...(detail ? { detail: this.safe(detail) } : {}) }, ...choices);
  }

  private safe(text: string): string {
    return plainMessage(this.redactor.redact(text));
  }

  private offer(choice: Thenable<string | undefined>, fixes: Fix[]): void {
    void Promise.resolve(choice)
      .then((picked) => fixes.find((fix) => fix.title === picked)?.run())
      .catch((error: unknown) => this.log.error(this.safe(`A fix failed: ${error instanceof Error ? error.message : String(error)}`)));
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
