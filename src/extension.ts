// Composition root: builds the parts, wires them together and registers them with VS Code. Every disposable ends up
// in context.subscriptions. The local engine is started only when a job needs it (or unfinished local jobs exist).
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { Views } from './command-ids';
import { readSettings } from './config';
import { AudioCache } from './jobs/audio-cache';
import { JobTracker } from './jobs/job-tracker';
import { Fixes, Notifier } from './notify';
import { ApiKeyStore } from './service/api-key';
import { ServiceConnection } from './service/connection';
import { LocalEngine } from './service/local-engine';
import { ExtensionLog } from './service/log';
import { trackJobContextKeys } from './views/job-context';
import { JobsTreeProvider } from './views/jobs-tree';
import { JobStatusBar } from './views/status-bar';
import { registerWalkthrough } from './walkthrough';
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
  context.subscriptions.push(channel);

  const storage = context.globalStorageUri.fsPath;
  let engineToken: Promise<string> | undefined;
  const token = () => (engineToken ??= readEngineToken(storage, log, logger));
  const engine = new LocalEngine({
    enginePath: path.join(context.extensionPath, 'dist', 'engine.js'),
    dataDir: path.join(storage, 'engine'),
    token,
    log: log.logger('engine'),
    onUnexpectedExit: ({ code, signal, lastError, restarting }) => {
      connection.reset();
      notifier.warn(
        `The local engine stopped unexpectedly (${signal ?? `exit code ${code}`})${lastError ? `: ${lastError}` : ''}. ${restarting ? 'It is starting again; running jobs continue.' : 'It stopped several times in a row; it starts again with the next job.'}`,
        [Fixes.showLog],
      );
    },
  });
  context.subscriptions.push({ dispose: () => void engine.stop() });

  const keys = new ApiKeyStore(context.secrets, log.redactor, () => readSettings().baseUrl);
  const connection = new ServiceConnection(engine, keys, log.logger('service'), token);
  const notifier = new Notifier(logger, log.redactor, vscode.Uri.joinPath(context.extensionUri, 'README.md'));
  const jobs = new JobTracker(context.globalState, new AudioCache(path.join(storage, 'audio')), connection, log.logger('jobs'));
  const statusBar = new JobStatusBar(jobs);
  const tree = new JobsTreeProvider(jobs);
  const player = registerPlayer(context, jobs, channel, notifier);
  context.subscriptions.push(keys, connection, jobs, statusBar, tree, player);

  const view = vscode.window.createTreeView(Views.jobs, { treeDataProvider: tree, showCollapseAll: false });
  context.subscriptions.push(
    view,
    view.onDidChangeVisibility((event) => {
      if (event.visible) statusBar.acknowledge();
    }),
    jobs.onDidChange(() => updateBadge(view, jobs)),
  );
  updateBadge(view, jobs);

  context.subscriptions.push(...registerCommands({ context, jobs, connection, keys, notifier, log: logger, channel, statusBar, player }));
  context.subscriptions.push(registerWalkthrough(context), trackJobContextKeys(jobs));

  context.subscriptions.push(
    jobs.onDidFinish(({ job, startedHere }) => {
      if (job.status === 'succeeded') {
        if (startedHere && readSettings().openPlayerWhenDone) {
          void player.open(job.id, { preserveFocus: true });
        } else if (startedHere) {
          notifier.info(`"${job.title}" is ready to play.`, [
            { title: 'Play', run: () => player.open(job.id) },
            { title: 'Save Audio As…', run: () => player.saveAs(job.id) },
          ]);
        }
        return;
      }
      if (job.status === 'failed' && job.error?.code !== 'cancelled') {
        const reason = job.error?.message ?? 'The service gave no reason.';
        notifier.warn(`"${job.title}" failed${job.error?.code ? ` (${job.error.code})` : ''}: ${reason}`, [
          Fixes.retryJob(job.id),
          Fixes.showLog,
        ]);
      }
    }),
    jobs.onDidLoseTrack(({ job, error }) => {
      notifier.error(`Article Audio lost track of "${job.title}"`, error, [Fixes.retryJob(job.id)]);
    }),
    connection.onDidChange((service) => {
      logger.info(`now using ${connection.describe(service)}`);
      jobs.resume();
    }),
  );

  jobs.resume();

  // The time is read by the activation benchmark (bench/extension.ts). The engine starts at the first job, not here.
  logger.info(`activated in ${Math.round(performance.now() - activationStart)} ms (VS Code ${vscode.version}, ${connection.current() === 'local' ? 'local engine' : 'remote service'})`);
  return { jobs, connection, statusBar, notifier, engine, keys, tree, storageUri: context.globalStorageUri, logUri: context.logUri };
}

export function deactivate(): void {
  // Everything, the local engine included, is stopped through context.subscriptions.
}

function updateBadge(view: vscode.TreeView<unknown>, jobs: JobTracker): void {
  const running = jobs.unfinished().length;
  view.badge = running > 0 ? { value: running, tooltip: `${running} job${running === 1 ? '' : 's'} running` } : undefined;
}

/**
 * The local engine's token: random, made once and kept in `<globalStorage>/engine-token` (readable by this user
 * only, beside the engine's data, which holds the jobs' texts anyway), so that the engine, which shows each job only
 * to the token that created it, still knows this window's jobs after a reload or a restart. Not in SecretStorage:
 * where that has no persistent keyring (VS Code in a browser, Linux without a Secret Service) every reload would
 * make a new token and lose the running jobs. It is not the remote service's API key, which stays in SecretStorage.
 */
async function readEngineToken(storage: string, log: ExtensionLog, logger: ReturnType<ExtensionLog['logger']>): Promise<string> {
  const file = path.join(storage, 'engine-token');
  let value: string | undefined;
  try {
    await mkdir(storage, { recursive: true });
    const fresh = randomBytes(32).toString('base64url');
    // 'wx': of two windows starting at once, one writes and the other reads what it wrote.
    await writeFile(file, fresh, { mode: 0o600, flag: 'wx' }).then(
      () => (value = fresh),
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      },
    );
    value ??= (await readFile(file, 'utf8')).trim() || undefined;
    if (!value) throw new Error(`${file} is empty`);
  } catch (error) {
    logger.warn(`could not keep the local engine's token in ${file} (${(error as Error).message}); it gets a token for this session only, so its jobs cannot be followed after a reload`);
    value = randomBytes(32).toString('base64url');
  }
  log.redactor.add(value);
  return value;
}
