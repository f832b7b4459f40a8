// The engine fixture in Postgres mode: what startEngineProcess starts when ARTICLE_AUDIO_TEST_ENGINE=postgres, so
// the engine's black-box HTTP tests (test/engine/jobs.test.ts) run unchanged against a team service: an API node
// (`dist/cli.js serve --database … --storage DIR`) and a real speech worker (`dist/cli.js worker`) over a real
// Postgres, one database per fixture. The handle's kill9/restart/stop act on the API node.
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

export async function startTeamEngineProcess(
  options: EngineProcessOptions,
  embedded: (options: EngineProcessOptions) => Promise<EngineProcess>,
): Promise<EngineProcess> {
  server ??= startPostgres();
  const postgres = await server;
  const args = options.args ?? [];
  const workerArgs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (WORKER_FLAGS.has(args[i] as string) && args[i + 1] !== undefined)
      workerArgs.push(args[i] as string, args[i + 1] as string);
  }
  const cluster = await startCluster({
    serverUrl: postgres.url,
    realWorker: true,
    // The tests' pages are served from loopback, which a team worker refuses to fetch unless told otherwise.
    workerArgs: ['--lease-s', '5', '--allow-private-network', ...workerArgs],
  });
  const teamArgs = ['--database', cluster.databaseUrl, '--storage', cluster.storage];
  const api = await embedded({ ...options, args: [...teamArgs, ...args] });
  await cluster.startWorker();
  const dispose = api.dispose.bind(api);
  api.dispose = async () => {
    await cluster.dispose();
    await dispose();
  };
  return api;
}

/** Stops the Postgres server the fixtures of this test process shared (its child process keeps node alive). */
export async function stopTeamPostgres(): Promise<void> {
  const running = server;
  server = undefined;
  await (await running)?.stop();
}
