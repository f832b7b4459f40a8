// Every failure a user can cause or meet becomes one notification that says what happened and offers the fix.
import * as vscode from 'vscode';
import { Commands } from './command-ids';
import { KeyringUnavailableError } from './connection/api-key';
import { MissingApiKeyError, OtherServiceError } from './connection/connection';
import { EngineStartError } from './connection/local-engine';
import type { Logger } from './connection/log';
import type { Redactor } from './api/index';
import type { JobRecord } from './jobs/types';
import { plainMessage } from './views/safe-text';
import { describeClientError, type FixKind } from './error-advice';

export interface Fix {
  title: string;
  run: () => unknown;
}

export interface ShownError {
  message: string;
  actions: string[];
  /** The buttons, in order (tests press them as a user would). */
  fixes?: Fix[];
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
    const { message, fixes, passing } = describe(error, this.readme);
    const text = this.safe(`${context}: ${message}`);
    this.log.error(text);
    // Trying the same again is the main button only where it may pass (the network, a busy service); for a refused
    // key, a wrong address or a bad request, the fix that fits comes first and Retry last.
    const actions = passing
      ? [...extra, ...fixes, showLog]
      : [
          ...fixes,
          ...extra.filter((fix) => fix.title !== 'Retry'),
          showLog,
          ...extra.filter((fix) => fix.title === 'Retry'),
        ];
    const seen = new Set<string>();
    const unique = actions.filter((fix) => !seen.has(fix.title) && seen.add(fix.title));
    this.remember({ message: text, actions: unique.map((fix) => fix.title), fixes: unique });
    this.offer(vscode.window.showErrorMessage(text, ...unique.map((fix) => fix.title)), unique);
  }

  /** Shows a warning with its fixes; returns at once, like error(). */
  warn(text: string, fixes: Fix[] = []): void {
    const safe = this.safe(text);
    this.log.warn(safe);
    this.remember({ message: safe, actions: fixes.map((fix) => fix.title), fixes });
    this.offer(vscode.window.showWarningMessage(safe, ...fixes.map((fix) => fix.title)), fixes);
  }

  /** Shows news (a job is ready, a key was saved) with its actions; returns at once. */
  info(text: string, actions: Fix[] = []): void {
    const safe = this.safe(text);
    this.log.info(safe);
    this.remember({ message: safe, actions: actions.map((fix) => fix.title), fixes: actions });
    this.offer(vscode.window.showInformationMessage(safe, ...actions.map((fix) => fix.title)), actions);
  }

  /**
   * The answer the next confirm() gets without showing its dialog: for the integration tests, which run in the
   * extension host and cannot press a modal dialog's button (the UI tests do that in the page).
   */
  answerNextConfirm: string | undefined;

  /**
   * A question with its answers as buttons: resolves with the title of the button picked, or undefined when
   * dismissed. A notification rather than a modal dialog: VS Code refuses modal dialogs while its tests drive it, and
   * a question that cannot be tested is one that can break unseen.
   */
  async confirm(text: string, detail: string | undefined, ...choices: string[]): Promise<string | undefined> {
    const safe = this.safe(text);
    this.remember({ message: detail ? `${safe} ${this.safe(detail)}` : safe, actions: choices });
    const answer = this.answerNextConfirm;
    if (answer !== undefined) {
      this.answerNextConfirm = undefined;
      return choices.includes(answer) ? answer : undefined;
    }
    return vscode.window.showWarningMessage(detail ? `${safe} ${this.safe(detail)}` : safe, ...choices);
  }

  private safe(text: string): string {
    return plainMessage(this.redactor.redact(text));
  }

  private offer(choice: Thenable<string | undefined>, fixes: Fix[]): void {
    void Promise.resolve(choice)
      .then((picked) => fixes.find((fix) => fix.title === picked)?.run())
      .catch((error: unknown) =>
        this.log.error(this.safe(`A fix failed: ${error instanceof Error ? error.message : String(error)}`)),
      );
  }

  private remember(entry: ShownError): void {
    this.shown.push(entry);
    if (this.shown.length > 100) this.shown.shift();
  }
}

const run =
  (command: string, ...args: unknown[]) =>
  () =>
    vscode.commands.executeCommand(command, ...args);
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
  saveAs: (jobId: string): Fix => ({ title: 'Save Audio As…', run: run(Commands.saveAudioAs, jobId) }),
  openPlayer: (jobId: string): Fix => ({ title: 'Play', run: run(Commands.openPlayer, jobId) }),
};

/**
 * The buttons for a failed job, chosen by its error code: Retry first only where trying again may pass (a network
 * hiccup, a crash, an interrupted run); a page that is not there, not an article or of the wrong type wants another
 * address, and a refused key wants Set API Key.
 */
export function jobErrorFixes(job: JobRecord): Fix[] {
  const code = job.error?.code ?? '';
  const message = job.error?.message ?? '';
  const retry = Fixes.retryJob(job.id);
  const url = job.source.url;
  const openPage: Fix[] = url
    ? [{ title: 'Open in Browser', run: () => vscode.env.openExternal(vscode.Uri.parse(url)) }]
    : [];
  const otherUrl: Fix = { title: 'Convert Another URL…', run: run(Commands.convertUrl, url ?? '') };
  if (code === 'voice_unavailable') {
    // The speech provider stays down or refuses its key (its 401 is no case for the job service's key): the built-in voices always work, offline.
    return [
      retry,
      {
        title: 'Use Built-in Voices and Retry',
        run: async () => {
          await vscode.workspace
            .getConfiguration('articleAudio.voice')
            .update('provider', 'builtin', vscode.ConfigurationTarget.Global);
          return retry.run();
        },
      },
      { title: 'Set Voice Provider Key', run: run(Commands.setVoiceKey) },
      showLog,
    ];
  }
  if (code === 'unsupported_language') {
    // The built-in voices read English only: a provider voice (multilingual) reads the article (README, Use another
    // voice); the voice settings are where one is chosen.
    return [
      {
        title: 'Open Voice Settings',
        run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'articleAudio.voice'),
      },
      retry,
      showLog,
    ];
  }
  if (code === 'unauthorized' || /\b(401|403)\b/.test(message)) return [setKey, retry, showLog];
  if (code === 'not_an_article' || code === 'too_short') return url ? [otherUrl, ...openPage, showLog] : [showLog];
  if (code === 'too_long') return [{ title: 'Convert a Selection', run: run(Commands.convertSelection) }, showLog];
  if (code === 'fetch_failed') {
    // The page is missing or of a type that cannot be read: the same address will fail the same way.
    const permanent = /\banswered 4\d\d\b|\bnot a web page\b|\bredirected to\b|\blarger than\b|\bis \d+ KB\b/.test(
      message,
    );
    return permanent ? [otherUrl, ...openPage, showLog] : [retry, ...openPage, showLog];
  }
  if (code === 'not_found') return [{ ...retry, title: 'Convert Again' }, showLog];
  if (code === 'intro_unusable' || code === 'outro_unusable') {
    return [
      {
        title: 'Open Settings',
        run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'articleAudio.introAudioUrl'),
      },
      retry,
      showLog,
    ];
  }
  return [retry, showLog];
}
function troubleshooting(readme: vscode.Uri): Fix {
  return { title: 'Open Troubleshooting', run: () => vscode.commands.executeCommand('markdown.showPreview', readme) };
}

/**
 * What to say about an error and which fixes fit it: the errors made in src/connection carry their own words; a
 * client error states facts, and error-advice.ts adds what to do, once. `passing`: trying the same again may work.
 */
function describe(error: unknown, readme: vscode.Uri): { message: string; fixes: Fix[]; passing: boolean } {
  if (error instanceof MissingApiKeyError) return { message: error.message, fixes: [setKey, useLocal], passing: false };
  if (error instanceof KeyringUnavailableError)
    return { message: error.message, fixes: [troubleshooting(readme)], passing: false };
  if (error instanceof EngineStartError)
    return { message: `${error.message} See the log for the engine's own words.`, fixes: [], passing: true };
  if (error instanceof OtherServiceError) return { message: error.message, fixes: [], passing: false };
  if (!(error instanceof Error)) return { message: String(error), fixes: [], passing: true };
  const { message, fixes, passing } = describeClientError(error);
  const buttons: Record<FixKind, Fix> = { setKey, useLocal, useRemote: Fixes.useRemote };
  return { message, fixes: fixes.map((kind) => buttons[kind]), passing };
}
