// The engine fixture in Postgres mode: what startEngineProcess starts when ARTICLE_AUDIO_TEST_ENGINE=postgres, so
// the engine's black-box HTTP tests (test/engine/jobs.test.ts) run unchanged against a team service: an API node
// (`dist/cli.js serve --database … --storage DIR`) and a real speech worker (`dist/cli.js worker`) over a real
// Postgres, one database per fixture. The handle's kill9/restart/stop act on the API node.
import { apiNodeArgs } from '../../src/cli/serve';
import type { EngineProcess, EngineProcessOptions } from '../support/engine-process';
import { startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

let server: Promise<TestPostgres> | undefined;

/** Flags of the embedded engine that also mean something to a worker. */
const WORKER_FLAGS = new Set([
  '--concurrency',
  '--max-crashes',
  '--progress-interval-s',
  '--fetch-max-bytes',
  '--fetch-timeout-s',
  '--fetch-max-redirects',
]);

/** The Postgres server the fixtures of this test process share (started on first use). */
export function teamPostgres(): Promise<TestPostgres> {
  server ??= startPostgres();
  return server;
}

export async function startTeamEngineProcess(
  options: EngineProcessOptions,
  embedded: (options: EngineProcessOptions) => Promise<EngineProcess>,
): Promise<EngineProcess> {
  const postgres = await teamPostgres();
  const args = options.args ?? [];
  const workerArgs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (WORKER_FLAGS.has(args[i] as string) && args[i + 1] !== undefined)
      workerArgs.push(args[i] as string, args[i + 1] as string);
  }
  const cluster = await startCluster({
    serverUrl: postgres.url,
    realWorker: true,
    // The tests' pages are served from loopback, which a team worker refuses to fetch unless told otherwise. A short
    // lease so that a killed service's jobs are taken over soon after the restart; no grace on SIGTERM, so that a
    // stopped service gives its running jobs back at once, as the embedded engine does.
    workerArgs: ['--lease-s', '2', '--stop-grace-s', '0', '--allow-private-network', ...workerArgs],
    // The engine's environment settings (e.g. ARTICLE_AUDIO_PARSE_TIMEOUT_S) are the worker's business as much as the
    // API node's: the worker runs the pipeline.
    ...(options.env ? { workerEnv: options.env } : {}),
  });
  const teamArgs = ['--database', cluster.databaseUrl, '--storage', cluster.storage];
  // An API node refuses the local engine's and the workers' flags (--lock-wait-s, --concurrency…): only its own.
  const api = await embedded({ ...options, args: [...teamArgs, ...apiNodeArgs(args)] });
  await cluster.startWorker();
  const stopApi = api.stop.bind(api);
  const kill9Api = api.kill9.bind(api);
  const restartApi = api.restart.bind(api);
  const dispose = api.dispose.bind(api);
  /** The workers that still run (a kill or stop of the service ends them all). */
  const liveWorkers = () => cluster.workers.splice(0);
  // The handle stands for the whole service, as `serve` is for the embedded engine: kill -9 kills the API node and
  // its worker (what a machine losing power does to a one-machine team service), restart starts both again.
  return Object.assign(api, {
    mode: 'postgres' as const,
    async kill9() {
      const exit = await kill9Api();
      await Promise.all(liveWorkers().map((w) => w.kill9()));
      return exit;
    },
    async stop(signal: 'SIGTERM' | 'SIGINT' = 'SIGTERM', timeoutMs?: number) {
      // Workers first: they give their running jobs back, and the API node's streams carry that before they end.
      await Promise.all(liveWorkers().map((w) => w.stop()));
      return stopApi(signal, timeoutMs);
    },
    async restart() {
      await restartApi();
      await cluster.startWorker();
    },
    async storedJobIds() {
      return (await cluster.query<{ id: string }>('SELECT id FROM aa_jobs ORDER BY id')).map((r) => r.id);
    },
    async dispose() {
      await cluster.dispose();
      await dispose();
    },
  });
}

/** Stops the Postgres server the fixtures of this test process shared (its child process keeps node alive). */
export async function stopTeamPostgres(): Promise<void> {
  const running = server;
  server = undefined;
  await (await running)?.stop();
}
