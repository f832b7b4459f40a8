// The local engine as a child process of the extension host: `dist/engine.js` run by the host's own Node
// (ELECTRON_RUN_AS_NODE), on 127.0.0.1 and a free port, with the data dir in the extension's global storage so that
// jobs and finished audio survive reloads. One engine serves every window: the window that starts it writes its
// address to `endpoint.json`, and other windows use it while it lives (the data dir admits one engine at a time).
// The engine ends with the window that started it (its stdin closes); if it dies otherwise, it is started again.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import type { Logger } from './log';
import { ENGINE_ENV, ENGINE_NODE_FLAGS } from '../engine/process-tuning';
import { VOICE_KEY_ENV } from './voice-settings';

export interface LocalEngineOptions {
  /** dist/engine.js */
  enginePath: string;
  /** The engine's data dir (jobs, outputs, endpoint.json). */
  dataDir: string;
  /** The bearer token the engine accepts and the client sends. */
  token: () => Promise<string>;
  log: Logger;
  /**
   * The voices file for a speech provider (voice-settings.ts) and its key, or undefined for the built-in voices. The
   * file goes in the data dir (0600); the key only in the engine's environment, under the name the file gives.
   */
  voices?: () => Promise<{ file: Record<string, unknown>; key?: string } | undefined>;
  /** Told when an engine this window started stopped on its own; `restarting` says whether it is started again. */
  onUnexpectedExit?: (detail: {
    code: number | null;
    signal: string | null;
    lastError?: string;
    restarting: boolean;
  }) => void;
}

interface Endpoint {
  url: string;
  pid: number;
}

const START_TIMEOUT_MS = 60_000;
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 120_000;

export class EngineStartError extends Error {
  static {
    this.prototype.name = 'EngineStartError';
  }
}

export class LocalEngine {
  private child: ChildProcess | undefined;
  private url: string | undefined;
  private starting: Promise<string> | undefined;
  private restarting: Promise<void> | undefined;
  private stopping = false;
  private readonly exits: number[] = [];
  private lastStderr: string[] = [];

  constructor(private readonly options: LocalEngineOptions) {}

  /** The engine's address, starting it (or finding the one another window started) when needed. */
  async ensure(): Promise<string> {
    // A restart for new voices is under way: wait for the old engine to be gone.
    if (this.restarting) await this.restarting;
    if (this.url && (this.child || (await this.alive(this.url)))) return this.url;
    this.url = undefined;
    this.starting ??= this.startOrJoin().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** The pid of the engine this window started, if any (for tests and the log). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Forgets an address that stopped answering, so that the next `ensure` looks again. */
  invalidate(url: string): void {
    if (this.url === url && !this.child) this.url = undefined;
  }

  /**
   * Stops the engine this window started so that the next job starts it again with new voices (its jobs resume
   * there). An engine another window started is left alone: it keeps the voices it was started with.
   */
  async restart(): Promise<boolean> {
    if (!this.child) return false;
    const done = (async () => {
      await this.stop();
      this.url = undefined;
      this.stopping = false;
    })();
    this.restarting = done.finally(() => {
      if (this.restarting === pending) this.restarting = undefined;
    });
    const pending = this.restarting;
    await pending;
    return true;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Closing stdin asks the engine to finish what it is writing and exit (--exit-with-stdin).
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGTERM'), 5_000);
    const hard = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    clearTimeout(hard);
    await this.removeEndpoint(child.pid);
  }

  private async startOrJoin(): Promise<string> {
    const shared = await this.readEndpoint();
    if (shared && shared.pid !== process.pid && processExists(shared.pid) && (await this.alive(shared.url))) {
      this.options.log.info(`using the local engine another window started (${shared.url}, pid ${shared.pid})`);
      this.url = shared.url;
      return shared.url;
    }
    return this.spawnEngine();
  }

  private async spawnEngine(): Promise<string> {
    const { log, dataDir, enginePath } = this.options;
    await mkdir(dataDir, { recursive: true });
    const token = await this.options.token();
    this.stopping = false;
    this.lastStderr = [];
    const voices = await this.options.voices?.();
    const voicesArgs: string[] = [];
    const voiceEnv: Record<string, string> = {};
    const voicesFile = path.join(dataDir, 'voices.json');
    if (voices) {
      await writeFile(voicesFile, `${JSON.stringify(voices.file, null, 2)}\n`, { mode: 0o600 });
      voicesArgs.push('--voices', voicesFile);
      if (voices.key) voiceEnv[VOICE_KEY_ENV] = voices.key;
    } else {
      await rm(voicesFile, { force: true });
    }
    log.info(
      `starting the local engine (data in ${dataDir}${voices ? `; voices from ${voicesFile}${voices.key ? ', with a provider key' : ''}` : ''})`,
    );
    const child = spawn(
      process.execPath,
      [
        ...ENGINE_NODE_FLAGS,
        enginePath,
        '--port',
        '0',
        '--data-dir',
        dataDir,
        '--exit-with-stdin',
        '--lock-wait-s',
        '5',
        ...voicesArgs,
      ],
      {
        env: { ...engineEnvironment(token), ...voiceEnv },
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      },
    );
    this.child = child;
    createInterface({ input: child.stderr }).on('line', (line) => {
      this.lastStderr.push(line);
      if (this.lastStderr.length > 20) this.lastStderr.shift();
      const match = /^\S+\s+(debug|info|warn|error)\s+(.*)$/.exec(line);
      if (match) log.log(match[1] as 'info', match[2] ?? '');
      else log.info(line);
    });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new EngineStartError(`The local engine did not start within ${START_TIMEOUT_MS / 1000} s.`));
      }, START_TIMEOUT_MS);
      const lines = createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        let message: { event?: string; url?: string; message?: string };
        try {
          message = JSON.parse(line) as typeof message;
        } catch {
          return;
        }
        if (message.event === 'listening' && message.url) {
          clearTimeout(timer);
          resolve(message.url);
        } else if (message.event === 'error') {
          clearTimeout(timer);
          reject(new EngineStartError(`The local engine could not start: ${message.message ?? 'no reason given'}`));
        }
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new EngineStartError(`The local engine could not be started: ${error.message}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new EngineStartError(
            `The local engine stopped while starting (${signal ?? `exit code ${code}`}). ${this.lastStderr.at(-1) ?? ''}`.trim(),
          ),
        );
      });
    }).catch((error: unknown) => {
      this.child = undefined;
      throw error;
    });
    log.info(`local engine listening on ${url} (pid ${child.pid})`);
    this.url = url;
    child.once('exit', (code, signal) => this.exited(child, code, signal));
    await this.writeEndpoint({ url, pid: child.pid ?? 0 });
    return url;
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.url = undefined;
    if (this.stopping) return;
    const now = Date.now();
    this.exits.push(now);
    while (this.exits.length > 0 && (this.exits[0] ?? 0) < now - RESTART_WINDOW_MS) this.exits.shift();
    const restarting = this.exits.length <= MAX_RESTARTS;
    const lastError = this.lastStderr.filter((l) => /\berror\b/i.test(l)).at(-1);
    this.options.log.error(
      `the local engine stopped unexpectedly (${signal ?? `exit code ${code}`})${restarting ? '; starting it again' : `; it stopped ${this.exits.length} times in ${RESTART_WINDOW_MS / 60_000} minutes, so it is not started again until the next job`}`,
    );
    this.options.onUnexpectedExit?.({ code, signal, ...(lastError ? { lastError } : {}), restarting });
    if (restarting) {
      this.ensure().catch((error: unknown) =>
        this.options.log.error(`restarting the local engine failed: ${(error as Error).message}`),
      );
    } else {
      this.exits.length = 0;
    }
  }

  private async alive(url: string): Promise<boolean> {
    try {
      const token = await this.options.token();
      const answer = await request(new URL('/v1/jobs/job_probe', url), {
        headers: { authorization: `Bearer ${token}` },
        headersTimeout: 2_000,
        bodyTimeout: 2_000,
      });
      await answer.body.dump();
      // 404: the engine knows our token and has no such job. 401 would be an engine with other tokens.
      return answer.statusCode === 404;
    } catch {
      return false;
    }
  }

  private get endpointFile(): string {
    return path.join(this.options.dataDir, 'endpoint.json');
  }

  private async readEndpoint(): Promise<Endpoint | undefined> {
    try {
      const value = JSON.parse(await readFile(this.endpointFile, 'utf8')) as Partial<Endpoint>;
      return typeof value.url === 'string' && typeof value.pid === 'number'
        ? { url: value.url, pid: value.pid }
        : undefined;
    } catch {
      return undefined;
    }
  }

  private async writeEndpoint(endpoint: Endpoint): Promise<void> {
    const temporary = `${this.endpointFile}.${process.pid}.tmp`;
    try {
      await writeFile(temporary, JSON.stringify(endpoint));
      await rename(temporary, this.endpointFile);
    } catch (error) {
      this.options.log.warn(`could not record the engine's address for other windows: ${(error as Error).message}`);
    }
  }

  private async removeEndpoint(pid: number | undefined): Promise<void> {
    const current = await this.readEndpoint();
    if (current && current.pid === pid) await rm(this.endpointFile, { force: true });
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The host's environment without engine settings a user may have exported for `article-audio serve`: this engine
 * listens on loopback only and accepts this window's token only. */
function engineEnvironment(token: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('ARTICLE_AUDIO_')) env[name] = value;
  // Test runs pass a few engine settings through (ARTICLE_AUDIO_TEST_ENGINE_*), to shorten intervals.
  for (const [name, value] of Object.entries(process.env)) {
    const match = /^ARTICLE_AUDIO_TEST_ENGINE_(\w+)$/.exec(name);
    if (match) env[`ARTICLE_AUDIO_${match[1]}`] = value;
  }
  return {
    ...ENGINE_ENV,
    ...env,
    ELECTRON_RUN_AS_NODE: '1',
    ARTICLE_AUDIO_TOKENS: token,
    ARTICLE_AUDIO_HOST: '127.0.0.1',
  };
}
