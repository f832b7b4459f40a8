// A team service for tests, all real processes: API nodes (`node dist/cli.js serve --database … --storage …`) and
// workers (the test pipeline via test-worker.ts, or the real `dist/cli.js worker`), over a real Postgres database
// and a shared folder or a real S3-protocol server.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type EngineProcess, repoRoot, startEngineProcess } from '../support/engine-process';
import { ownProcess } from '../support/own-processes.mjs';
import { createDatabase } from './postgres';

export interface WorkerProcess {
  readonly pid: number;
  readonly stderr: string;
  readonly stdout: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill9(): Promise<void>;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ClusterOptions {
  /** Postgres server address; each cluster gets a database of its own on it. */
  serverUrl: string;
  /** `dir` (default) or an S3 server: endpoint, bucket and AWS environment. */
  s3?: { endpoint: string; bucket: string; env: Record<string, string> };
  /** A database made beforehand (a migration test's older schema); default: a new empty one. */
  databaseUrl?: string;
  /** Extra flags for API nodes. */
  apiArgs?: string[];
  /** Extra flags for workers. */
  workerArgs?: string[];
  /** Environment for workers (AA_TEST_STEPS, AA_TEST_STEP_MS). */
  workerEnv?: Record<string, string>;
  /** API tokens. Default: two random ones. */
  tokens?: string[];
  /** Use the real speech pipeline (dist/cli.js worker) instead of the test pipeline. */
  realWorker?: boolean;
  /**
   * A JavaScript file run with plain `node` as the worker instead of test-worker.ts through tsx (the capacity
   * benchmark bundles test-worker.ts once, so that 64 workers start without compiling TypeScript 64 times).
   */
  workerScript?: string;
}

export interface Cluster {
  databaseUrl: string;
  storage: string;
  tokens: string[];
  apis: EngineProcess[];
  workers: WorkerProcess[];
  /** Starts an API node; `extraArgs` add to the cluster's API flags. */
  startApi(extraArgs?: string[]): Promise<EngineProcess>;
  /** A query on the cluster's database. */
  query<T extends pg.QueryResultRow>(sql: string, values?: unknown[]): Promise<T[]>;
  /** Starts a worker; `extraArgs` add to (or override) the cluster's worker flags. */
  startWorker(extraArgs?: string[]): Promise<WorkerProcess>;
  dispose(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const databaseUrl =
    options.databaseUrl ?? (await createDatabase(options.serverUrl, `aa_${randomBytes(6).toString('hex')}`));
  const folder = options.s3 ? undefined : mkdtempSync(path.join(os.tmpdir(), 'aa-team-files-'));
  const storage = options.s3 ? `s3://${options.s3.bucket}/${randomBytes(4).toString('hex')}` : (folder as string);
  const tokens = options.tokens ?? [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];
  const teamArgs = ['--database', databaseUrl, '--storage', storage];
  const env = { ...(options.s3?.env ?? {}) };
  const apis: EngineProcess[] = [];
  const workers: WorkerProcess[] = [];

  async function startApi(extraArgs: string[] = []): Promise<EngineProcess> {
    const api = await startEngineProcess({
      tokens,
      args: [...teamArgs, ...(options.apiArgs ?? []), ...extraArgs],
      env,
      startTimeoutMs: 60_000,
    });
    apis.push(api);
    return api;
  }

  async function startWorker(extraArgs: string[] = []): Promise<WorkerProcess> {
    const flags = [...teamArgs, ...(options.workerArgs ?? []), ...extraArgs];
    const args = options.realWorker
      ? [path.join(repoRoot, 'dist', 'cli.js'), 'worker', ...flags]
      : options.workerScript
        ? [options.workerScript, ...flags]
        : ['--import', 'tsx', path.join(repoRoot, 'test', 'team', 'test-worker.ts'), ...flags];
    const child = spawn(process.execPath, args, {
      cwd: repoRoot,
      env: { ...process.env, ...env, ...options.workerEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    ownProcess(child);
    children.add(child);
    let stderr = '';
    let stdout = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-20_000)));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => {
        children.delete(child);
        resolve({ code, signal });
      }),
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (/worker \S+ started/.test(stdout)) resolve();
      });
      void exited.then((exit) =>
        reject(new Error(`The worker exited (${exit.code ?? exit.signal}) before starting: ${stderr}`)),
      );
    });
    const worker: WorkerProcess = {
      pid: child.pid ?? -1,
      get stderr() {
        return stderr;
      },
      get stdout() {
        return stdout;
      },
      exited,
      async kill9() {
        child.kill('SIGKILL');
        await exited;
      },
      async stop() {
        child.kill('SIGTERM');
        return exited;
      },
    };
    workers.push(worker);
    return worker;
  }

  return {
    databaseUrl,
    storage,
    tokens,
    apis,
    workers,
    startApi,
    startWorker,
    async query<T extends pg.QueryResultRow>(sql: string, values: unknown[] = []) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        return (await client.query<T>(sql, values)).rows;
      } finally {
        await client.end();
      }
    },
    async dispose() {
      await Promise.all(workers.map((w) => w.kill9()));
      await Promise.all(apis.map((a) => a.dispose()));
      if (folder) rmSync(folder, { recursive: true, force: true });
    },
  };
}
