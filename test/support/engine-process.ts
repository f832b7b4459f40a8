// Starts the real engine as a process, the way users and the extension do: `node dist/cli.js serve` (default) or
// `node dist/engine.js` (the extension's entry), on a free port, over a temp data dir, with random tokens. Waits for
// the address line, and can stop it with a signal, kill -9 it, and start it again on the same data dir and port.
// Needs `npm run build` first (the test command builds before running suites).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ownProcess } from './own-processes.mjs';

export const repoRoot = path.resolve(path.dirname(__filename), '..', '..');

export interface EngineProcessOptions {
  /**
   * `serve`: node dist/cli.js serve (default). `engine`: node dist/engine.js, as the extension starts it.
   * `test-pipeline`: the embedded engine with the test pipeline (test/team/test-engine.ts: no speech; AA_TEST_STEPS,
   * AA_TEST_STEP_MS and AA_TEST_PARTS in `env` shape its jobs), for fault tests that need many quick jobs.
   */
  entry?: 'serve' | 'engine' | 'test-pipeline';
  /** Another build's dist/cli.js or dist/engine.js in place of this checkout's (a benchmark's base build). */
  script?: string;
  /** API tokens (ARTICLE_AUDIO_TOKENS). Default: two random ones. */
  tokens?: string[];
  /** Default: a new temp dir, removed by dispose(). */
  dataDir?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** More flags, e.g. ['--queue-depth', '2', '--heartbeat-s', '0.2']. */
  args?: string[];
  /** More environment variables. */
  env?: Record<string, string>;
  /** Flags for node itself, before the script (e.g. ENGINE_NODE_FLAGS). */
  nodeArgs?: readonly string[];
  /** How long to wait for the address line. Default 20 s. */
  startTimeoutMs?: number;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface EngineProcess {
  /** `embedded` (the data dir engine) or `postgres` (a team service: API node and worker, ARTICLE_AUDIO_TEST_ENGINE). */
  readonly mode: 'embedded' | 'postgres';
  readonly url: string;
  readonly port: number;
  readonly tokens: string[];
  readonly dataDir: string;
  readonly pid: number;
  /** Everything the current process wrote so far. */
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves when the current process exits. */
  readonly exited: Promise<ProcessExit>;
  /** SIGKILL, no chance to clean up; resolves once the process is gone. */
  kill9(): Promise<ProcessExit>;
  /** Closes the process's stdin, as when the program that started it dies (see --exit-with-stdin). */
  closeStdin(): void;
  /** Sends SIGTERM (or SIGINT) and waits for the exit. */
  stop(signal?: 'SIGTERM' | 'SIGINT', timeoutMs?: number): Promise<ProcessExit>;
  /** The ids of the jobs the engine keeps (the data dir's job folders, or the team database's rows). */
  storedJobIds(): Promise<string[]>;
  /** Starts the engine again on the same data dir and port (after stop or kill9). */
  restart(): Promise<void>;
  /** Ends the process if it runs and removes a data dir this helper created. */
  dispose(): Promise<void>;
}

export async function startEngineProcess(options: EngineProcessOptions = {}): Promise<EngineProcess> {
  // The same black-box tests against the team service (API node + worker over Postgres): test/team/team-engine.ts.
  if (
    process.env.ARTICLE_AUDIO_TEST_ENGINE === 'postgres' &&
    (options.entry ?? 'serve') === 'serve' &&
    !options.args?.includes('--database')
  ) {
    const { startTeamEngineProcess } = await import('../team/team-engine');
    return startTeamEngineProcess(options, startEngineProcess);
  }
  const entry = options.entry ?? 'serve';
  const script =
    options.script ??
    (entry === 'test-pipeline'
      ? path.join(repoRoot, 'test', 'team', 'test-engine.ts')
      : path.join(repoRoot, 'dist', entry === 'serve' ? 'cli.js' : 'engine.js'));
  if (!existsSync(script)) throw new Error(`${script} is missing: run \`npm run build\` first.`);
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'aa-engine-'));
  const tokens = options.tokens ?? [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')];
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('ARTICLE_AUDIO_')),
  );
  // The suites serve their pages from loopback, which `serve` refuses to fetch by default, and some submit hundreds of
  // jobs a minute with one token, beyond serve's default rate and number of unfinished jobs (test/engine/hostile-network.test.ts tests both, passing
  // '' or a flag to get serve's own defaults back).
  Object.assign(env, {
    ARTICLE_AUDIO_TOKENS: tokens.join(','),
    ARTICLE_AUDIO_ALLOW_PRIVATE_NETWORK: '1',
    ARTICLE_AUDIO_TOKEN_SUBMIT_RATE: '0',
    ARTICLE_AUDIO_TOKEN_MAX_JOBS: '0',
    ...options.env,
  });

  let child: ChildProcess;
  let stdout = '';
  let stderr = '';
  // Settled until the first launch spawns the engine.
  let exited: Promise<ProcessExit> = Promise.resolve({ code: null, signal: null });
  let url = '';
  let port = options.port ?? 0;

  async function launch(): Promise<void> {
    const args = [
      ...(options.nodeArgs ?? []),
      ...(entry === 'test-pipeline' ? ['--import', 'tsx'] : []),
      script,
      ...(entry === 'serve' ? ['serve'] : []),
      '--port',
      String(port),
      // A team API node (--database) has no data dir, and refuses the flag.
      ...(options.args?.includes('--database') ? [] : ['--data-dir', dataDir]),
      ...(options.args ?? []),
    ];
    stdout = '';
    stderr = '';
    // Its own process group, ended with this process whatever happens (own-processes.mjs).
    child = ownProcess(
      spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true }),
      {
        group: true,
      },
    );
    exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        resolve({ code, signal });
      });
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const listening = new Promise<string>((resolve, reject) => {
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        const found =
          entry === 'engine' ? listeningUrlFromJson(stdout) : /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
        if (found) resolve(found);
      });
      void exited.then((exit) =>
        reject(
          new Error(
            `The engine exited (${exit.code ?? exit.signal}) before listening.\nstdout: ${stdout}\nstderr: ${stderr}`,
          ),
        ),
      );
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `The engine did not print its address within ${options.startTimeoutMs ?? 20_000} ms.\nstderr: ${stderr}`,
            ),
          ),
        options.startTimeoutMs ?? 20_000,
      );
    });
    try {
      url = await Promise.race([listening, timeout]);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    } finally {
      clearTimeout(timer);
    }
    port = Number(new URL(url).port);
  }

  try {
    await launch();
  } catch (error) {
    // An engine that never listened has no handle to dispose of it: its folder goes here (a team API node that
    // refuses a newer schema left one per run).
    await exited;
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }

  const handle: EngineProcess = {
    mode: 'embedded',
    get url() {
      return url;
    },
    get port() {
      return port;
    },
    tokens,
    dataDir,
    get pid() {
      return child.pid ?? -1;
    },
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    get exited() {
      return exited;
    },
    closeStdin() {
      child.stdin?.end();
    },
    async kill9() {
      child.kill('SIGKILL');
      return exited;
    },
    async stop(signal = 'SIGTERM', timeoutMs = 20_000) {
      child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([
        exited,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`The engine did not exit within ${timeoutMs} ms of ${signal}.\nstderr: ${stderr}`)),
            timeoutMs,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      return result;
    },
    storedJobIds() {
      const jobs = path.join(dataDir, 'jobs');
      return Promise.resolve(existsSync(jobs) ? readdirSync(jobs) : []);
    },
    async restart() {
      if (child.exitCode === null && child.signalCode === null)
        throw new Error('The engine is still running; stop or kill it first.');
      await launch();
    },
    async dispose() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return handle;
}

function listeningUrlFromJson(stdout: string): string | undefined {
  for (const line of stdout.split('\n')) {
    try {
      const message = JSON.parse(line) as { event?: string; url?: string };
      if (message.event === 'listening' && typeof message.url === 'string') return message.url;
    } catch {
      // not a complete line yet
    }
  }
  return undefined;
}
