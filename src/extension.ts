// Composition root: builds the parts, wires them together and registers them with VS Code. Every disposable ends up
// in context.subscriptions. The local engine is started only when a job needs it (or unfinished local jobs exist).
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { Views } from './command-ids';
import { registerCommands } from './commands/index';
import { registerSample } from './commands/views';
import { readSettings } from './config';
import { ApiKeyStore } from './connection/api-key';
import { ServiceConnection } from './connection/connection';
import { readEngineToken } from './connection/engine-token';
import { LocalEngine } from './connection/local-engine';
import { ExtensionLog } from './connection/log';
import { affectsVoices, readVoiceSettings, voicesFileFor } from './connection/voice-settings';
import { JobNotices } from './job-notices';
import { AudioCache } from './jobs/audio-cache';
import { JobTracker } from './jobs/job-tracker';
import { ListeningQueue } from './jobs/listening-queue';
import type { JobRecord } from './jobs/types';
import { Fixes, Notifier } from './notify';
import { trackJobContextKeys } from './views/job-context';
import { JobsTreeProvider } from './views/jobs-tree';
import { JobStatusBar } from './views/status-bar';
import { registerPlayer } from './webview/player-panel';

/** What activate returns: for the integration tests and for other extensions that want to follow jobs. */
export interface ArticleAudioApi {
  jobs: JobTracker;
  connection: ServiceConnection;
  statusBar: JobStatusBar;
  notifier: Notifier;
  engine: LocalEngine;
  keys: ApiKeyStore;
  tree: JobsTreeProvider;
  queue: ListeningQueue;
  view: vscode.TreeView<JobRecord>;
  log: ExtensionLog;
  /** The extension's global storage (engine data dir, audio cache). */
  storageUri: vscode.Uri;
  /** The folder of the extension's log files. */
  logUri: vscode.Uri;
}

export function activate(context: vscode.ExtensionContext): ArticleAudioApi {
  const activationStart = performance.now();
  const channel = vscode.window.createOutputChannel('Article Audio', { log: true });
  const log = new ExtensionLog(channel);
  const logger = log.logger('extension');
  context.subscriptions.push(channel, log.register());
  log.keepFailedJobsIn(path.join(context.globalStorageUri.fsPath, 'job-logs'));

  const storage = context.globalStorageUri.fsPath;
  let engineToken: Promise<string> | undefined;
  const token = () => (engineToken ??= readEngineToken(storage, log.redactor, logger));
  const engine = new LocalEngine({
    enginePath: path.join(context.extensionPath, 'dist', 'engine.js'),
    dataDir: path.join(storage, 'engine'),
    token,
    log: log.logger('engine'),
    // A speech provider from the articleAudio.voice settings; its key from the OS keyring (never a setting).
    voices: async () => {
      const settings = readVoiceSettings();
      if (settings.provider === 'builtin') return undefined;
      const key = await keys.get(settings.baseUrl).catch(() => undefined);
      const file = voicesFileFor(settings, key !== undefined);
      return file ? { file, ...(key ? { key } : {}) } : undefined;
    },
    onUnexpectedExit: ({ code, signal, lastError, restarting }) => {
      notifier.warn(
        `The local engine stopped unexpectedly (${signal ?? `exit code ${code}`})${lastError ? `: ${lastError}` : ''}. ${restarting ? 'It is starting again; running jobs continue.' : 'It stopped several times in a row; it starts again with the next job.'}`,
        [Fixes.showLog],
      );
    },
  });
  context.subscriptions.push({ dispose: () => void engine.stop() });

  const keys = new ApiKeyStore(context.secrets, log.redactor, () => readSettings().baseUrl);
  // New voice settings or a new provider key: the engine this window started is started again with them.
  const restartForVoices = (why: string) =>
    void engine.restart().then((restarted) => {
      if (restarted) logger.info(`${why}: the local engine starts again with it at the next job`);
    });
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (affectsVoices(event)) restartForVoices('the voice settings changed');
    }),
    keys.onDidChange(() => {
      if (readVoiceSettings().provider !== 'builtin') restartForVoices('a key changed');
    }),
  );
  const connection = new ServiceConnection(engine, keys, log.logger('service'), token);
  // An installed .vsix holds the users' page as readme.md (vsce lowercases it); a development checkout has README.md.
  const readme =
    ['readme.md', 'README.md'].find((name) => existsSync(path.join(context.extensionPath, name))) ?? 'README.md';
  const notifier = new Notifier(logger, log.redactor, vscode.Uri.joinPath(context.extensionUri, readme));
  const audioCache = new AudioCache(path.join(storage, 'audio'));
  void audioCache.tighten();
  const jobs = new JobTracker({
    store: context.globalState,
    cache: audioCache,
    services: connection,
    log: log.logger('jobs'),
    emitter: () => new vscode.EventEmitter(),
  });
  const queue = new ListeningQueue(context.globalState);
  const statusBar = new JobStatusBar(jobs, connection);
  const tree = new JobsTreeProvider(jobs, queue);
  const player = registerPlayer(context, jobs, channel, notifier, queue);
  context.subscriptions.push(player.onDidChangeSounding((job) => statusBar.setSounding(job)));
  context.subscriptions.push(
    keys,
    connection,
    jobs,
    statusBar,
    tree,
    player,
    new JobNotices(jobs, notifier, player, queue),
  );

  const view = vscode.window.createTreeView(Views.jobs, {
    treeDataProvider: tree,
    showCollapseAll: false,
    // Several rows can be removed or queued at once (the commands take the selection).
    canSelectMany: true,
  });
  // Which engine new jobs go to: "local engine", or the remote address (shown as text, never as a link).
  const describeView = () => (view.description = connection.engineDescription());
  describeView();
  context.subscriptions.push(
    view,
    view.onDidChangeVisibility((event) => {
      if (event.visible) statusBar.acknowledge();
    }),
    jobs.onDidChange(() => updateBadge(view, jobs)),
    // A failed job's lines outlive the window, for Show Why the Job Failed after a reload.
    jobs.onDidFinish(({ job }) => {
      if (job.status === 'failed')
        log
          .keepJobLines(job.id)
          .catch((error: unknown) => logger.warn(`cannot keep the lines of ${job.id}: ${String(error)}`));
    }),
    // A job removed from the list leaves the listening queue too.
    jobs.onDidChange(() => queue.retain((id) => jobs.get(id) !== undefined)),
  );
  updateBadge(view, jobs);

  context.subscriptions.push(
    registerSample(context.extensionUri),
    ...registerCommands({
      extension: context,
      jobs,
      queue,
      connection,
      keys,
      notifier,
      log: logger,
      extensionLog: log,
      channel,
      statusBar,
      player,
    }),
  );
  context.subscriptions.push(
    trackJobContextKeys(jobs, queue),
    connection.onDidChange((service) => {
      logger.info(`now using ${connection.describe(service)}`);
      describeView();
      jobs.resume();
    }),
  );

  jobs.resume();

  // The time is read by the activation benchmark (bench/extension.ts). The engine starts at the first job, not here.
  logger.info(
    `activated in ${Math.round(performance.now() - activationStart)} ms (VS Code ${vscode.version}, ${connection.current() === 'local' ? 'local engine' : 'remote service'})`,
  );
  return {
    jobs,
    connection,
    statusBar,
    notifier,
    engine,
    keys,
    tree,
    queue,
    view,
    log,
    storageUri: context.globalStorageUri,
    logUri: context.logUri,
  };
}

export function deactivate(): void {
  // Everything, the local engine included, is stopped through context.subscriptions.
}

function updateBadge(view: vscode.TreeView<unknown>, jobs: JobTracker): void {
  const running = jobs.unfinished().length;
  view.badge =
    running > 0 ? { value: running, tooltip: `${running} job${running === 1 ? '' : 's'} running` } : undefined;
}
