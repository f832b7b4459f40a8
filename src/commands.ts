// Every command of the extension. Each handler says why when it cannot do what was asked, and what to do.
// Commands that act on a job take the tree item (a JobRecord), a job id (status bar links, other extensions), or
// nothing (the palette: a quick pick of the jobs it applies to).
import path from 'node:path';
import * as vscode from 'vscode';
import { countCharacters, MODEL_IDS, modelById, type ModelId, TEXT_MAX_LENGTH, TEXT_MIN_LENGTH, textProblem } from './protocol';
import { Commands, Views } from './command-ids';
import { isHttpUrl, readSettings, updateBaseUrl } from './config';
import type { JobTracker, NewJob } from './jobs/job-tracker';
import type { JobRecord } from './jobs/types';
import { Fixes, type Notifier } from './notify';
import { type ApiKeyStore, checkApiKey } from './service/api-key';
import type { ServiceConnection } from './service/connection';
import type { Logger } from './service/log';
import type { JobStatusBar } from './views/status-bar';
import { modelLabel, statusLabel } from './views/labels';
import { plainLabel } from './views/safe-text';
import type { PlayerController } from './webview/player-panel';

export interface CommandServices {
  context: vscode.ExtensionContext;
  jobs: JobTracker;
  connection: ServiceConnection;
  keys: ApiKeyStore;
  notifier: Notifier;
  log: Logger;
  channel: vscode.LogOutputChannel;
  statusBar: JobStatusBar;
  player: PlayerController;
}

const LAST_MODEL_KEY = 'articleAudio.lastModel';

export function registerCommands(services: CommandServices): vscode.Disposable[] {
  const { jobs, notifier, channel, statusBar, player, keys } = services;
  const submit = (job: Omit<NewJob, 'modelId' | 'introAudioUrl' | 'outroAudioUrl'>) => submitWithModel(services, job);

  return [
    vscode.commands.registerCommand(Commands.convertSelection, async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) {
        notifier.warn('Select the text to convert in an editor first.');
        return undefined;
      }
      const selections = editor.selections.filter((s) => !s.isEmpty);
      if (selections.length === 0) {
        notifier.warn('Nothing is selected. Select the text to convert, or convert the whole document.', [
          { title: 'Convert Document', run: () => vscode.commands.executeCommand(Commands.convertDocument) },
        ]);
        return undefined;
      }
      const text = selections.map((s) => editor.document.getText(s)).join('\n\n');
      if (!(checkLength(services, text, 'The selection'))) return undefined;
      const first = selections[0] ?? editor.selection;
      return submit({
        title: titleOf(text, `Selection from ${path.basename(editor.document.uri.path) || 'editor'}`),
        text,
        source: {
          kind: 'selection',
          documentUri: editor.document.uri.toString(),
          range: { startLine: first.start.line, startCharacter: first.start.character, endLine: first.end.line, endCharacter: first.end.character },
        },
      });
    }),

    vscode.commands.registerCommand(Commands.convertDocument, async (uri?: vscode.Uri) => {
      let document: vscode.TextDocument | undefined;
      try {
        document = uri instanceof vscode.Uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
      } catch (error) {
        notifier.error(`Could not open ${uri instanceof vscode.Uri ? path.basename(uri.path) : 'the document'}`, error);
        return undefined;
      }
      if (!document) {
        notifier.warn('Open the document to convert in an editor first (Markdown or plain text).');
        return undefined;
      }
      const text = document.getText();
      const name = path.basename(document.uri.path) || 'Untitled';
      if (!(checkLength(services, text, `"${name}"`))) return undefined;
      return submit({
        title: titleOf(text, name, document.languageId === 'markdown'),
        text,
        source: { kind: 'document', documentUri: document.uri.toString() },
      });
    }),

    vscode.commands.registerCommand(Commands.convertUrl, async (given?: string) => {
      const url = typeof given === 'string' && isHttpUrl(given) ? given : await askForUrl(typeof given === 'string' ? given : await suggestedUrl());
      if (!url) return undefined;
      return submit({ title: titleOfUrl(url), url, source: { kind: 'url', url } });
    }),

    vscode.commands.registerCommand(Commands.setApiKey, async (given?: string) => {
      const service = services.connection.current();
      if (service === 'local') {
        // A key is kept for one service's address, so the address comes first; Use Remote Service asks for the key.
        if (typeof given === 'string') {
          notifier.warn('Choose the remote service first: an API key is kept for one service address.', [Fixes.useRemote]);
          return false;
        }
        return vscode.commands.executeCommand<boolean>(Commands.useRemoteService);
      }
      const key =
        typeof given === 'string'
          ? given
          : await vscode.window.showInputBox({
              title: 'Article Audio: API Key',
              prompt: `API key for ${services.connection.describe(service)} (kept in the OS keyring, never in settings, sent only to this address)`,
              password: true,
              ignoreFocusOut: true,
              placeHolder: 'Paste the key',
              validateInput: checkApiKey,
            });
      if (key === undefined) return false;
      const problem = checkApiKey(key);
      if (problem) {
        notifier.warn(problem, [Fixes.setKey]);
        return false;
      }
      try {
        await keys.set(service, key);
      } catch (error) {
        notifier.error('The API key was not saved', error);
        return false;
      }
      services.log.info(`API key for ${services.connection.describe(service)} saved in SecretStorage`);
      notifier.info(`API key saved for ${services.connection.describe(service)}.`);
      return true;
    }),

    vscode.commands.registerCommand(Commands.clearApiKey, async () => {
      const service = services.connection.current();
      if (service === 'local') {
        notifier.info('Article Audio uses the local engine, which needs no API key. Keys of remote services are removed while that service is chosen.');
        return;
      }
      try {
        await keys.clear(service);
      } catch (error) {
        notifier.error('The API key was not removed', error);
        return;
      }
      services.log.info(`API key for ${services.connection.describe(service)} removed from SecretStorage`);
      notifier.info(`API key for ${services.connection.describe(service)} removed from the OS keyring.`);
    }),

    vscode.commands.registerCommand(Commands.showJobs, async () => {
      statusBar.acknowledge();
      await vscode.commands.executeCommand(`${Views.jobs}.focus`);
    }),

    vscode.commands.registerCommand(Commands.showLog, () => channel.show(true)),

    vscode.commands.registerCommand(Commands.openPlayer, async (target?: JobTarget) => {
      const job = await resolveJob(services, target, (j) => j.status === 'succeeded' && j.files !== undefined, 'No finished job to play yet. Convert a selection, a document or a URL first.');
      if (job) await player.open(job.id);
    }),

    vscode.commands.registerCommand(Commands.cancelJob, async (target?: JobTarget) => {
      const job = await resolveJob(services, target, (j) => !['succeeded', 'failed'].includes(j.status), 'No job is running.');
      if (!job) return;
      try {
        const supported = await jobs.cancel(job.id);
        if (!supported) notifier.warn(`${services.connection.describe(job.service)} cannot cancel jobs; "${job.title}" goes on until it ends.`);
      } catch (error) {
        notifier.error(`Could not cancel "${job.title}"`, error);
      }
    }),

    vscode.commands.registerCommand(Commands.retryJob, async (target?: JobTarget) => {
      const job = await resolveJob(services, target, (j) => j.status === 'failed' || j.status === 'succeeded' || !jobs.isFollowing(j.id), 'No job to retry.');
      if (!job) return undefined;
      const settings = readSettings();
      try {
        return await jobs.retry(job.id, {
          ...(settings.introAudioUrl ? { introAudioUrl: settings.introAudioUrl } : {}),
          ...(settings.outroAudioUrl ? { outroAudioUrl: settings.outroAudioUrl } : {}),
        });
      } catch (error) {
        notifier.error(`Could not retry "${job.title}"`, error, [Fixes.retryJob(job.id)]);
        return undefined;
      }
    }),

    vscode.commands.registerCommand(Commands.revealAudio, async (target?: JobTarget) => {
      const job = await resolveJob(services, target, (j) => j.files !== undefined, 'No finished job has audio yet.');
      if (!job?.files) return;
      const file = vscode.Uri.file(job.files.audio);
      try {
        await vscode.commands.executeCommand('revealFileInOS', file);
      } catch {
        // No file manager here (VS Code in a browser, or a remote window): say where the file is instead.
        const audio = job.files.audio;
        notifier.info(`The audio of "${job.title}" is at ${audio}`, [
          { title: 'Copy Path', run: () => vscode.env.clipboard.writeText(audio) },
          { title: 'Save Audio As…', run: () => player.saveAs(job.id) },
        ]);
      }
    }),

    vscode.commands.registerCommand(Commands.saveAudioAs, async (target?: JobTarget) => {
      const job = await resolveJob(services, target, (j) => j.files !== undefined, 'No finished job has audio yet.');
      if (job) await player.saveAs(job.id);
    }),

    vscode.commands.registerCommand(Commands.copyJobId, async (target?: JobTarget) => {
      const job = await resolveJob(services, target, () => true, 'The job list is empty.');
      if (!job) return;
      await vscode.env.clipboard.writeText(job.id);
      vscode.window.setStatusBarMessage(`$(copy) Copied job id ${job.id}`, 3000);
    }),

    vscode.commands.registerCommand(Commands.removeJob, async (target?: JobTarget) => {
      const job = await resolveJob(services, target, () => true, 'The job list is empty.');
      if (!job) return;
      if (!['succeeded', 'failed'].includes(job.status)) {
        const answer = await notifier.confirm(`"${job.title}" has not finished. Remove it from the list anyway? The service may still finish it.`, undefined, 'Remove');
        if (answer !== 'Remove') return;
      }
      await jobs.remove(job.id);
    }),

    vscode.commands.registerCommand(Commands.useLocalEngine, async () => {
      await updateBaseUrl('');
      notifier.info('Article Audio now uses the local engine on this computer. No account needed.');
    }),

    vscode.commands.registerCommand(Commands.useRemoteService, async (given?: string) => {
      const current = readSettings().baseUrl ?? '';
      const url =
        typeof given === 'string'
          ? given
          : await vscode.window.showInputBox({
              title: 'Article Audio: Remote Service',
              prompt: 'Base address of a job service that follows the Article Audio API',
              value: current || 'https://',
              ignoreFocusOut: true,
              validateInput: (value) => (isHttpUrl(value.trim()) ? undefined : 'Enter an http:// or https:// address, such as https://audio.example.com'),
            });
      if (url === undefined) return false;
      if (!isHttpUrl(url.trim())) {
        notifier.warn(`"${url}" is not an http:// or https:// address.`);
        return false;
      }
      const baseUrl = url.trim().replace(/\/+$/, '');
      await updateBaseUrl(baseUrl);
      let hasKey = (await keys.get(baseUrl).catch(() => undefined)) !== undefined;
      // (current() is checked so that Set API Key, which asks for an address first when local, can never loop.)
      if (!hasKey && typeof given !== 'string' && services.connection.current() !== 'local') hasKey = (await vscode.commands.executeCommand<boolean>(Commands.setApiKey)) === true;
      notifier.info(`Article Audio now uses ${services.connection.describe()}.`);
      return hasKey;
    }),
  ];
}

type JobTarget = JobRecord | string | undefined;

async function resolveJob(services: CommandServices, target: JobTarget, applies: (job: JobRecord) => boolean, none: string): Promise<JobRecord | undefined> {
  const id = typeof target === 'string' ? target : target?.id;
  if (id !== undefined) {
    const job = services.jobs.get(id);
    if (!job) services.notifier.warn(`Article Audio has no job ${id}; it may have been removed from the list.`);
    return job;
  }
  const candidates = services.jobs.all().filter(applies);
  if (candidates.length === 0) {
    services.notifier.warn(none);
    return undefined;
  }
  if (candidates.length === 1) return candidates[0];
  const picked = await vscode.window.showQuickPick(
    candidates.map((job) => ({ label: plainLabel(job.title), description: `${modelLabel(job.modelId)} · ${statusLabel(job)}`, job })),
    { placeHolder: 'Choose a job', matchOnDescription: true },
  );
  return picked?.job;
}

async function submitWithModel(services: CommandServices, job: Omit<NewJob, 'modelId' | 'introAudioUrl' | 'outroAudioUrl'>): Promise<JobRecord | undefined> {
  const modelId = await pickModel(services.context);
  if (!modelId) return undefined;
  const settings = readSettings();
  const request: NewJob = {
    ...job,
    modelId,
    ...(settings.introAudioUrl ? { introAudioUrl: settings.introAudioUrl } : {}),
    ...(settings.outroAudioUrl ? { outroAudioUrl: settings.outroAudioUrl } : {}),
  };
  const starting = services.connection.current() === 'local' ? 'Starting the local engine…' : `Sending to ${services.connection.describe()}…`;
  try {
    return await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `Article Audio: ${starting}` }, () => services.jobs.submit(request));
  } catch (error) {
    services.notifier.error(`Could not convert "${job.title}"`, error, [{ title: 'Retry', run: () => submitWithModel(services, job) }]);
    return undefined;
  }
}

async function pickModel(context: vscode.ExtensionContext): Promise<ModelId | undefined> {
  const fixed = readSettings().model;
  if (fixed !== 'ask') return fixed;
  const last = context.globalState.get<string>(LAST_MODEL_KEY);
  const order = [...MODEL_IDS].sort((a, b) => (a === last ? -1 : b === last ? 1 : 0));
  const picked = await vscode.window.showQuickPick(
    order.map((id) => ({ label: modelLabel(id), description: id, detail: modelById(id).description, id })),
    { title: 'Article Audio: Voice', placeHolder: 'Choose how the article should sound (set articleAudio.model to skip this)', matchOnDescription: true, matchOnDetail: true },
  );
  if (!picked) return undefined;
  await context.globalState.update(LAST_MODEL_KEY, picked.id);
  return picked.id;
}

function checkLength(services: CommandServices, text: string, what: string): boolean {
  const length = countCharacters(text);
  if (length < TEXT_MIN_LENGTH) {
    services.notifier.warn(`${what} has ${length} characters; an article needs at least ${TEXT_MIN_LENGTH}. Select more text.`);
    return false;
  }
  if (length > TEXT_MAX_LENGTH) {
    services.notifier.warn(`${what} has ${length.toLocaleString('en-US')} characters; the service takes at most ${TEXT_MAX_LENGTH.toLocaleString('en-US')}. Select a part of it and convert that.`);
    return false;
  }
  const problem = textProblem(text);
  if (problem) {
    services.notifier.warn(`${what} ${problem}. Select text with words in it.`);
    return false;
  }
  return true;
}

/** The first Markdown heading, else the first line, else the fallback. */
export function titleOf(text: string, fallback: string, preferHeading = true): string {
  const heading = preferHeading ? /^\s{0,3}#{1,3}\s+(.+?)\s*#*\s*$/m.exec(text.slice(0, 5000))?.[1] : undefined;
  const firstLine = text.split('\n').map((line) => line.trim()).find((line) => line.length > 0);
  const raw = heading ?? (firstLine && firstLine.length <= 80 ? firstLine : undefined) ?? fallback;
  const clean = raw.replace(/[*_`[\]]/g, '').replace(/\s+/g, ' ').trim();
  return clean.length > 80 ? `${clean.slice(0, 79)}…` : clean || fallback;
}

function titleOfUrl(url: string): string {
  const parsed = new URL(url);
  const last = parsed.pathname.split('/').filter(Boolean).at(-1);
  return last ? `${parsed.hostname.replace(/^www\./, '')}: ${decodeURIComponent(last).replace(/[-_]+/g, ' ').replace(/\.\w+$/, '')}` : parsed.hostname;
}

async function askForUrl(value: string | undefined): Promise<string | undefined> {
  const answer = await vscode.window.showInputBox({
    title: 'Article Audio: Convert URL',
    prompt: 'Address of the article (a web page, or a Markdown or text file)',
    value: value ?? '',
    placeHolder: 'https://example.com/blog/post',
    ignoreFocusOut: true,
    validateInput: (input) => {
      const trimmed = input.trim();
      if (!trimmed) return 'Enter the address of the article.';
      if (!/^https?:\/\//i.test(trimmed)) return 'The address must start with http:// or https://';
      return isHttpUrl(trimmed) ? undefined : 'This is not a valid web address.';
    },
  });
  return answer?.trim() || undefined;
}

/** A link under the cursor (Markdown link or bare address), else an address on the clipboard. */
async function suggestedUrl(): Promise<string | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (editor) {
    const position = editor.selection.active;
    const line = editor.document.lineAt(position.line).text;
    for (const match of line.matchAll(/https?:\/\/[^\s<>"')\]]+/g)) {
      const start = match.index;
      const end = start + match[0].length;
      if (position.character >= start - 1 && position.character <= end + 1 && isHttpUrl(match[0])) return match[0];
    }
    const selected = editor.document.getText(editor.selection).trim();
    if (isHttpUrl(selected)) return selected;
  }
  // In a browser, reading the clipboard waits on a permission prompt (and shows an error when refused): no
  // suggestion is worth that before the box even opens.
  if (vscode.env.uiKind === vscode.UIKind.Web) return undefined;
  const clipboard = (await vscode.env.clipboard.readText()).trim();
  return isHttpUrl(clipboard) && !/\s/.test(clipboard) ? clipboard : undefined;
}
