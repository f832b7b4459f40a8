// The engine's settings as command-line flags and environment variables, shared by `article-audio serve` and the
// engine process the extension starts (dist/engine.js). One table: parsing, defaults and --help all come from it.
// A flag wins over its environment variable.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { LogLevel } from './core/logger';
import type { EngineOptions } from './core/options';
import { readVoicesFile, type VoicesConfig, VoicesFileError } from '../speech/voice/voices-file';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

type Kind = 'string' | 'count' | 'seconds' | 'flag' | 'switch';

interface Setting {
  flag: string;
  env?: string;
  kind: Kind;
  value: string;
  help: string;
}

export const ENGINE_SETTINGS: readonly Setting[] = [
  {
    flag: 'host',
    env: 'ARTICLE_AUDIO_HOST',
    kind: 'string',
    value: 'HOST',
    help: 'interface to listen on (default 127.0.0.1; 0.0.0.0 for all)',
  },
  { flag: 'port', env: 'ARTICLE_AUDIO_PORT', kind: 'count', value: 'N', help: 'port to listen on, 0 for a free one' },
  {
    flag: 'data-dir',
    env: 'ARTICLE_AUDIO_DATA_DIR',
    kind: 'string',
    value: 'DIR',
    help: `where jobs and their files are kept (default ${defaultDataDir()})`,
  },
  {
    flag: 'tokens-file',
    env: 'ARTICLE_AUDIO_TOKENS_FILE',
    kind: 'string',
    value: 'FILE',
    help: 'file with API tokens, one per line (in addition to ARTICLE_AUDIO_TOKENS)',
  },
  {
    flag: 'voices',
    env: 'ARTICLE_AUDIO_VOICES',
    kind: 'string',
    value: 'FILE',
    help: 'voices file (JSON keyed by model id): read those models with a speech provider (README "Use another voice"); the others keep the built-in voices',
  },
  {
    flag: 'concurrency',
    env: 'ARTICLE_AUDIO_CONCURRENCY',
    kind: 'count',
    value: 'N',
    help: `jobs processed at once (default: CPU cores, here ${os.availableParallelism()})`,
  },
  {
    flag: 'queue-depth',
    env: 'ARTICLE_AUDIO_QUEUE_DEPTH',
    kind: 'count',
    value: 'N',
    help: 'jobs that may wait before new ones get 429 (default 100)',
  },
  {
    flag: 'retention-s',
    env: 'ARTICLE_AUDIO_RETENTION_S',
    kind: 'seconds',
    value: 'S',
    help: 'how long finished jobs and files are kept (default 86400)',
  },
  {
    flag: 'heartbeat-s',
    env: 'ARTICLE_AUDIO_HEARTBEAT_S',
    kind: 'seconds',
    value: 'S',
    help: 'stream heartbeat interval (default 15)',
  },
  {
    flag: 'max-body-bytes',
    env: 'ARTICLE_AUDIO_MAX_BODY_BYTES',
    kind: 'count',
    value: 'N',
    help: 'largest request body (default 1048576)',
  },
  {
    flag: 'fetch-max-bytes',
    env: 'ARTICLE_AUDIO_FETCH_MAX_BYTES',
    kind: 'count',
    value: 'N',
    help: 'largest article or intro/outro download (default 10485760)',
  },
  {
    flag: 'fetch-timeout-s',
    env: 'ARTICLE_AUDIO_FETCH_TIMEOUT_S',
    kind: 'seconds',
    value: 'S',
    help: 'time limit of one download (default 20)',
  },
  {
    flag: 'fetch-max-redirects',
    env: 'ARTICLE_AUDIO_FETCH_MAX_REDIRECTS',
    kind: 'count',
    value: 'N',
    help: 'redirects followed per download (default 5)',
  },
  {
    flag: 'progress-interval-s',
    env: 'ARTICLE_AUDIO_PROGRESS_INTERVAL_S',
    kind: 'seconds',
    value: 'S',
    help: 'shortest time between two progress events of a job (default 0.25)',
  },
  {
    flag: 'idempotency-window-s',
    env: 'ARTICLE_AUDIO_IDEMPOTENCY_WINDOW_S',
    kind: 'seconds',
    value: 'S',
    help: 'how long an Idempotency-Key refers to its job (default 86400)',
  },
  {
    flag: 'max-crashes',
    env: 'ARTICLE_AUDIO_MAX_CRASHES',
    kind: 'count',
    value: 'N',
    help: 'runs of a job lost to crashes before it fails as interrupted (default 3)',
  },
  {
    flag: 'lock-wait-s',
    env: 'ARTICLE_AUDIO_LOCK_WAIT_S',
    kind: 'seconds',
    value: 'S',
    help: 'how long to wait for another engine to release the data dir (default 10)',
  },
  {
    flag: 'public-url',
    env: 'ARTICLE_AUDIO_PUBLIC_URL',
    kind: 'string',
    value: 'URL',
    help: 'base of the output addresses in answers, e.g. https://audio.example.com behind a proxy (default: the address it listens on)',
  },
  {
    flag: 'allow-private-network',
    env: 'ARTICLE_AUDIO_ALLOW_PRIVATE_NETWORK',
    kind: 'switch',
    value: '',
    help: 'fetch articles and intro/outro audio from loopback and private addresses too (env: 1 or 0; default: off for serve, on for the engine the extension starts)',
  },
  {
    flag: 'fetch-allow-hosts',
    env: 'ARTICLE_AUDIO_FETCH_ALLOW_HOSTS',
    kind: 'string',
    value: 'HOSTS',
    help: 'comma-separated host names that may be fetched even on a private network, e.g. wiki.corp (default none)',
  },
  {
    flag: 'max-connections',
    env: 'ARTICLE_AUDIO_MAX_CONNECTIONS',
    kind: 'count',
    value: 'N',
    help: 'open connections at once; beyond it idle ones are closed first (default: half the open-files limit, at most 1024)',
  },
  {
    flag: 'idle-socket-timeout-s',
    env: 'ARTICLE_AUDIO_IDLE_SOCKET_TIMEOUT_S',
    kind: 'seconds',
    value: 'S',
    help: 'close a connection that sends no request for this long (default 10)',
  },
  {
    flag: 'token-submit-rate',
    env: 'ARTICLE_AUDIO_TOKEN_SUBMIT_RATE',
    kind: 'count',
    value: 'N',
    help: "submissions per minute per token, then 429 with Retry-After (default 60 for serve, none for the extension's engine; 0: no limit)",
  },
  {
    flag: 'token-queue-depth',
    env: 'ARTICLE_AUDIO_TOKEN_QUEUE_DEPTH',
    kind: 'count',
    value: 'N',
    help: 'jobs one token may have waiting (default: --queue-depth; a token below its fair share, the depth divided by the tokens, is admitted even when others filled the queue)',
  },
  {
    flag: 'token-max-jobs',
    env: 'ARTICLE_AUDIO_TOKEN_MAX_JOBS',
    kind: 'count',
    value: 'N',
    help: "unfinished jobs (queued or processing) one token may have at once, then 429 with Retry-After until one finishes (default 20 for serve, none for the extension's engine; 0: no limit)",
  },
  {
    flag: 'token-storage-mb',
    env: 'ARTICLE_AUDIO_TOKEN_STORAGE_MB',
    kind: 'count',
    value: 'N',
    help: "MB of finished files one token may keep, then 429 until some expire (default 2048 for serve, none for the extension's engine; 0: no limit)",
  },
  {
    flag: 'min-free-disk-mb',
    env: 'ARTICLE_AUDIO_MIN_FREE_DISK_MB',
    kind: 'count',
    value: 'N',
    help: "free space to keep on the data dir's disk; below it submissions get 507 (default 256 for serve, 0 for the extension's engine)",
  },
  {
    flag: 'log-level',
    env: 'ARTICLE_AUDIO_LOG_LEVEL',
    kind: 'string',
    value: 'LEVEL',
    help: 'debug, info, warn or error (default info); the log goes to stderr',
  },
  {
    flag: 'exit-with-stdin',
    kind: 'flag',
    value: '',
    help: 'stop when standard input closes (so the engine ends with the program that started it)',
  },
];

export interface ProcessSettings {
  engine: Omit<EngineOptions, 'pipeline' | 'log' | 'store'>;
  logLevel: LogLevel;
  exitWithStdin: boolean;
  /** The voices file, read and checked, with its keys from the environment (never printed). */
  voices?: VoicesConfig;
}

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** Defaults that differ between an engine that serves one person and a service that others reach. */
export interface ServiceDefaults {
  allowPrivateNetwork: boolean;
  tokenSubmitRate: number;
  tokenMaxJobs: number;
  tokenStorageMb: number;
  minFreeDiskMb: number;
}

/** `article-audio serve` and team API nodes: reached by others, so they protect the machine and each client. */
export const SHARED_SERVICE_DEFAULTS: ServiceDefaults = {
  allowPrivateNetwork: false,
  tokenSubmitRate: 60,
  tokenMaxJobs: 20,
  tokenStorageMb: 2048,
  minFreeDiskMb: 256,
};
/** The engine the extension starts (dist/engine.js): one person, on their own machine. */
export const PERSONAL_ENGINE_DEFAULTS: ServiceDefaults = {
  allowPrivateNetwork: true,
  tokenSubmitRate: 0,
  tokenMaxJobs: 0,
  tokenStorageMb: 0,
  minFreeDiskMb: 0,
};

/**
 * Reads the engine's settings from arguments (without the command name) and the environment. Without `defaults`
 * the shared service's apply (the safe ones).
 */
export function readEngineSettings(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  defaults: { port: number } & Partial<ServiceDefaults>,
): ProcessSettings {
  const service = { ...SHARED_SERVICE_DEFAULTS, ...defaults };
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: Object.fromEntries(
        ENGINE_SETTINGS.map((s) => [
          s.flag,
          { type: s.kind === 'flag' || s.kind === 'switch' ? ('boolean' as const) : ('string' as const) },
        ]),
      ),
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const raw = (setting: Setting): string | boolean | undefined => {
    const fromFlag = parsed.values[setting.flag];
    if (fromFlag !== undefined) return fromFlag;
    const fromEnv = setting.env ? env[setting.env] : undefined;
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };
  const values = new Map<string, string | number | boolean>();
  for (const setting of ENGINE_SETTINGS) {
    const value = raw(setting);
    if (value === undefined) continue;
    const source = parsed.values[setting.flag] !== undefined ? `--${setting.flag}` : String(setting.env);
    values.set(setting.flag, convert(setting.kind, value, source));
  }
  const number = (flag: string) => values.get(flag) as number | undefined;
  const seconds = (flag: string) => (values.has(flag) ? Math.round((values.get(flag) as number) * 1000) : undefined);

  const tokens = (env.ARTICLE_AUDIO_TOKENS ?? '').split(',');
  const tokensFile = values.get('tokens-file') as string | undefined;
  if (tokensFile !== undefined) {
    try {
      tokens.push(...readFileSync(tokensFile, 'utf8').split(/[\r\n,]+/));
    } catch (error) {
      throw new UsageError(`Cannot read the tokens file ${tokensFile}: ${(error as Error).message}`);
    }
  }
  const usable = tokens.map((t) => t.trim()).filter((t) => t !== '');
  if (usable.length === 0) {
    throw new UsageError(
      'No API tokens: set ARTICLE_AUDIO_TOKENS to one or more comma-separated secrets (or use --tokens-file); clients send one as `Authorization: Bearer <token>`.',
    );
  }

  const logLevel = (values.get('log-level') as string | undefined) ?? 'info';
  if (!LEVELS.includes(logLevel as LogLevel)) throw new UsageError(`--log-level must be one of ${LEVELS.join(', ')}.`);
  const port = number('port') ?? defaults.port;
  if (port > 65535) throw new UsageError('--port must be 0 to 65535.');

  const fetchLimits = {
    ...(values.has('fetch-max-bytes') ? { maxBytes: number('fetch-max-bytes') } : {}),
    ...(values.has('fetch-timeout-s') ? { timeoutMs: seconds('fetch-timeout-s') } : {}),
    ...(values.has('fetch-max-redirects') ? { maxRedirects: number('fetch-max-redirects') } : {}),
  };
  const engine: ProcessSettings['engine'] = {
    host: (values.get('host') as string | undefined) ?? '127.0.0.1',
    port,
    dataDir: path.resolve((values.get('data-dir') as string | undefined) ?? defaultDataDir()),
    tokens: usable,
    ...optional('concurrency', number('concurrency')),
    ...optional('queueDepth', number('queue-depth')),
    ...optional('retentionMs', seconds('retention-s')),
    ...optional('heartbeatMs', seconds('heartbeat-s')),
    ...optional('maxBodyBytes', number('max-body-bytes')),
    ...optional('progressIntervalMs', seconds('progress-interval-s')),
    ...optional('idempotencyWindowMs', seconds('idempotency-window-s')),
    ...optional('maxCrashes', number('max-crashes')),
    ...optional('lockWaitMs', seconds('lock-wait-s')),
    ...optional('publicUrl', values.get('public-url') as string | undefined),
    ...optional(
      'fetchAllowedHosts',
      (values.get('fetch-allow-hosts') as string | undefined)
        ?.split(',')
        .map((h) => h.trim())
        .filter((h) => h !== ''),
    ),
    allowPrivateNetwork: (values.get('allow-private-network') as boolean | undefined) ?? service.allowPrivateNetwork,
    ...optional('maxConnections', number('max-connections')),
    ...optional('idleSocketTimeoutMs', seconds('idle-socket-timeout-s')),
    tokenSubmitRate: number('token-submit-rate') ?? service.tokenSubmitRate,
    ...optional('tokenQueueDepth', number('token-queue-depth')),
    tokenMaxJobs: number('token-max-jobs') ?? service.tokenMaxJobs,
    tokenStorageBytes: (number('token-storage-mb') ?? service.tokenStorageMb) * 1024 * 1024,
    minFreeDiskBytes: (number('min-free-disk-mb') ?? service.minFreeDiskMb) * 1024 * 1024,
    ...(Object.keys(fetchLimits).length > 0 ? { fetchLimits } : {}),
  };
  const voicesFile = values.get('voices') as string | undefined;
  return {
    engine,
    logLevel: logLevel as LogLevel,
    exitWithStdin: values.get('exit-with-stdin') === true,
    ...(voicesFile !== undefined ? { voices: loadVoices(voicesFile, env) } : {}),
  };
}

/** The voices file (`--voices`, ARTICLE_AUDIO_VOICES), or a usage error naming the file and the field. */
export function loadVoices(file: string, env: NodeJS.ProcessEnv): VoicesConfig {
  try {
    return readVoicesFile(file, env);
  } catch (error) {
    if (error instanceof VoicesFileError) throw new UsageError(error.message);
    throw error;
  }
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

function convert(kind: Kind, value: string | boolean, source: string): string | number | boolean {
  if (kind === 'flag' || typeof value === 'boolean') return value;
  if (kind === 'switch') {
    const word = value.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(word)) return true;
    if (['0', 'false', 'no', 'off'].includes(word)) return false;
    throw new UsageError(`${source} must be 1 or 0 (true or false), not "${value}".`);
  }
  if (kind === 'string') return value;
  const pattern = kind === 'count' ? /^\d{1,12}$/ : /^\d{1,9}(\.\d{1,6})?$/;
  if (!pattern.test(value.trim()) || (kind === 'seconds' && Number(value) === 0)) {
    throw new UsageError(
      `${source} must be ${kind === 'count' ? 'a whole number' : 'a positive number of seconds'}, not "${value}".`,
    );
  }
  return Number(value.trim());
}

/** Where `article-audio serve` keeps jobs unless told otherwise: the platform's per-user data folder. */
export function defaultDataDir(): string {
  const home = os.homedir();
  if (process.platform === 'win32')
    return path.join(process.env.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'), 'article-audio', 'engine');
  if (process.platform === 'darwin')
    return path.join(home, 'Library', 'Application Support', 'article-audio', 'engine');
  return path.join(process.env.XDG_DATA_HOME || path.join(home, '.local', 'share'), 'article-audio', 'engine');
}

/** The settings part of --help: all of them, or only the flags named (in the table's order). */
export function settingsHelp(only?: readonly string[]): string {
  const rows = ENGINE_SETTINGS.filter((s) => only === undefined || only.includes(s.flag)).map((s) => [
    `--${s.flag}${s.value ? ` ${s.value}` : ''}`,
    s.help,
    s.env ?? '',
  ]);
  const width = Math.max(...rows.map(([flag]) => (flag ?? '').length));
  return rows
    .map(
      ([flag = '', help, env]) => `  ${flag.padEnd(width)}  ${help}${env ? `\n  ${''.padEnd(width)}  env ${env}` : ''}`,
    )
    .join('\n');
}
