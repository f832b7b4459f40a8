// `article-audio serve --database …` (a team API node) and `article-audio worker --database …` (a synthesis
// worker). Loaded only when one of them runs, so the Postgres driver and the AWS SDK stay out of the extension.
// Team flags are read here; every other flag is the engine's own (settings.ts).
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { version } from '../../../package.json';
import { createDefaultPipeline } from '../core/default-pipeline';
import { type RunningEngine, serveHttp } from '../index';
import { type Logger, type LogLevel, definedFields, textFields } from '../core/logger';
import { EngineMetrics } from '../core/metrics';
import { DEFAULT_FETCH_LIMITS, defaultMaxConnections } from '../core/options';
import type { ArticlePipeline } from '../../speech/types';
import { UsageError, readEngineSettings } from '../settings';
import { splitTeamArgs, type TeamArgs } from './settings-help';
import { PgApiService } from './api-service';
import { type DbConnection, type Pool, openPool, redactUrl } from './db';
import { type ApiFleetValues, agreeOnSettings, manageSettings, readSettings, storedValues } from './fleet-settings';
import { openOutputStorage } from './output-storage';
import { PgEventBus } from './pg-events';
import { migrate } from './schema';
import { TeamTokens, manageTokens, unusableToken } from './tokens';
import { Worker, sweepRunFolders } from './worker';
import { serveMetrics } from './metrics-server';
import { listWorkers, workersTable } from './workers';

const ORDER: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/**
 * Structured logs for a fleet: one JSON object per line on stderr (time, level, role, node, the line's fields: job_id,
 * token, worker, run, request_id, state, code; and msg). With --log-format text: the fields as key=value.
 */
export function teamLogger(minimum: LogLevel, json: boolean, fields: Record<string, string>): Logger {
  const threshold = ORDER.indexOf(minimum);
  return (level, message, extra) => {
    if (ORDER.indexOf(level) < threshold) return;
    const time = new Date().toISOString();
    process.stderr.write(
      json
        ? `${JSON.stringify({ time, level, ...fields, ...definedFields(extra), msg: message })}\n`
        : `${time} ${level.padEnd(5)} ${message}${textFields(extra)}\n`,
    );
  };
}

function requireStorage(team: TeamArgs, command: string): string {
  if (!team.database) throw new UsageError(`${command} needs --database postgres://… (or ARTICLE_AUDIO_DATABASE_URL).`);
  if (!team.storage)
    throw new UsageError(
      `${command} needs --storage DIR or s3://bucket/prefix (or ARTICLE_AUDIO_STORAGE), the same on every node.`,
    );
  return team.storage;
}

/**
 * A worker's scratch folder must be a folder it can write, checked before it says it started: otherwise it would
 * claim jobs and fail every one of them.
 */
async function checkWorkDir(dir: string): Promise<void> {
  const fix =
    'Create it (a local folder this user can write), or choose another with --work-dir or ARTICLE_AUDIO_WORK_DIR.';
  let info;
  try {
    info = await stat(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(
      code === 'ENOENT'
        ? `--work-dir ${dir} does not exist. ${fix}`
        : `--work-dir ${dir} cannot be read (${code}). ${fix}`,
    );
  }
  if (!info.isDirectory()) throw new UsageError(`--work-dir ${dir} is not a folder. ${fix}`);
  try {
    await rm(await mkdtemp(path.join(dir, 'aa-check-')), { recursive: true, force: true });
  } catch (error) {
    throw new UsageError(
      `--work-dir ${dir} is not writable (${(error as NodeJS.ErrnoException).code ?? 'error'}). ${fix}`,
    );
  }
}

/** Node's own warnings (the AWS SDK announces the end of its Node 20 support this way) as JSON lines too. */
function warningsToLog(log: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => log('warn', `${warning.name}: ${warning.message.replace(/\s*\n\s*/g, ' ')}`));
}

/** Wires SIGINT/SIGTERM to a clean stop; a second signal or a stop that hangs exits at once. */
function stopOnSignals(log: Logger, stop: () => Promise<void>, deadlineMs: number): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) {
      log('warn', `${signal} again: exiting without finishing the stop.`);
      process.exit(1);
    }
    stopping = true;
    log('info', `${signal}: stopping.`);
    setTimeout(() => {
      log('error', `The stop took longer than ${deadlineMs / 1000} s; exiting.`);
      process.exit(1);
    }, deadlineMs).unref();
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log('error', `The stop failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
}

/**
 * Brings the schema to this release's version at start (schema.ts); a database newer than this release stops the
 * start with SchemaTooNewError's message, after closing the pool so that the process can exit.
 */
async function migrateOrClose(pool: Pool, log: Logger): Promise<void> {
  try {
    const { from, to } = await migrate(pool, { programVersion: version, log: (message) => log('info', message) });
    log('debug', from === to ? `Schema at version ${to}.` : `Schema migrated from version ${from} to ${to}.`);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}

export interface ApiNode extends RunningEngine {
  service: PgApiService;
}

/** Starts a team API node: HTTP only; jobs go to Postgres for workers. */
export async function startApiNode(args: readonly string[], env: NodeJS.ProcessEnv, log?: Logger): Promise<ApiNode> {
  const team = splitTeamArgs(args, env);
  const storageSpec = requireStorage(team, 'serve --database');
  // Users may all be in the database (article-audio token add), so tokens from the environment are optional here.
  const fromEnv =
    Boolean(env.ARTICLE_AUDIO_TOKENS?.trim()) ||
    team.rest.some((a) => a === '--tokens-file' || a.startsWith('--tokens-file=')) ||
    Boolean(env.ARTICLE_AUDIO_TOKENS_FILE);
  const settings = readEngineSettings(team.rest, fromEnv ? env : { ...env, ARTICLE_AUDIO_TOKENS: unusableToken() }, {
    port: 8787,
  });
  const logger =
    log ?? teamLogger(settings.logLevel, team.json, { role: 'api', node: `${os.hostname()}:${process.pid}` });
  const databaseUrl = team.database as string;
  const db = team.db as DbConnection;
  const pool = openPool(db, logger, team.dbPoolSize ?? 10);
  await migrateOrClose(pool, logger);
  const storage = await openOutputStorage(storageSpec, team.s3Endpoint);
  const tokens = new TeamTokens(settings.engine.tokens, pool, logger);
  await tokens.start();
  if (!fromEnv && tokens.databaseTokens === 0)
    logger(
      'warn',
      'No API tokens yet: add one per user with `article-audio token add NAME --database …`, or set ARTICLE_AUDIO_TOKENS.',
    );
  const metrics = new EngineMetrics('api');
  const bus = new PgEventBus(pool, db, logger, undefined, metrics);
  await bus.start();
  const engine = settings.engine;
  // Retention, queue depth and token limits are the fleet's, stored once (fleet-settings.ts): the first node stores
  // its values; a node given others warns and uses the stored ones.
  const given = (name: keyof ApiFleetValues, value: number | undefined): Partial<ApiFleetValues> =>
    value !== undefined && flagGiven(team.rest, env, name) ? { [name]: value } : {};
  const fleet = await agreeOnSettings(
    pool,
    {
      ...given('retention-s', engine.retentionMs === undefined ? undefined : engine.retentionMs / 1000),
      ...given('queue-depth', engine.queueDepth),
      ...given('token-max-jobs', engine.tokenMaxJobs),
      ...given('token-submit-rate', engine.tokenSubmitRate),
    },
    {
      'retention-s': (engine.retentionMs ?? 24 * 3600_000) / 1000,
      'queue-depth': engine.queueDepth ?? 100,
      'token-max-jobs': engine.tokenMaxJobs ?? 20,
      'token-submit-rate': engine.tokenSubmitRate ?? 60,
    },
    `${os.hostname()}:${process.pid}`,
    logger,
  );
  const service = new PgApiService({
    pool,
    bus,
    storage,
    queueDepth: fleet['queue-depth'],
    retentionMs: fleet['retention-s'] * 1000,
    idempotencyWindowMs: engine.idempotencyWindowMs ?? 24 * 3600_000,
    tokenMaxJobs: fleet['token-max-jobs'],
    tokenSubmitRate: fleet['token-submit-rate'],
    readFleetSettings: async () => storedValues(await readSettings(pool), fleet, logger),
    log: logger,
    // A database token by its name; one from ARTICLE_AUDIO_TOKENS has none: the start of its SHA-256 (the owner id).
    tokenName: (owner) => tokens.nameOf(owner) ?? `configured-${owner.slice(0, 8)}`,
  });
  service.start();
  const running = await serveHttp(
    service,
    {
      host: engine.host ?? '127.0.0.1',
      port: engine.port ?? 8787,
      tokens,
      heartbeatMs: engine.heartbeatMs ?? 15_000,
      streamRetryMs: engine.streamRetryMs ?? 2000,
      maxBodyBytes: engine.maxBodyBytes ?? 1024 * 1024,
      metrics,
      publicUrl: engine.publicUrl?.replace(/\/+$/, ''),
      // As for `serve`: half the open-files limit, at most 1024 (serveHttp's own default, 256, held fewer streams).
      maxConnections: engine.maxConnections ?? defaultMaxConnections(),
      ...(engine.idleSocketTimeoutMs !== undefined ? { idleSocketTimeoutMs: engine.idleSocketTimeoutMs } : {}),
      // The token limits are counted in Postgres by the service (over all nodes), not per node here; bytes per token
      // need the embedded store and are not applied. Free disk is kept on a storage folder (--min-free-disk-mb), as
      // on the embedded data dir; S3 has no disk to measure.
      limits: {
        submitRatePerMinute: 0,
        storageBytes: 0,
        minFreeDiskBytes: storage.folder === undefined ? 0 : (engine.minFreeDiskBytes ?? 0),
        ...(storage.folder === undefined ? {} : { dataDir: storage.folder }),
      },
      log: logger,
    },
    `team API node on ${redactUrl(databaseUrl)}, files in ${storageSpec}`,
  );
  let closed: Promise<void> | undefined;
  return {
    url: running.url,
    port: running.port,
    service,
    close() {
      closed ??= (async () => {
        await running.close();
        tokens.stop();
        await storage.close();
        await pool.end();
      })();
      return closed;
    },
  };
}

/** `article-audio serve --database …` as a process. */
export async function serveTeam(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const team = splitTeamArgs(args, env);
  const log = teamLogger(logLevelOf(team.rest, env), team.json, {
    role: 'api',
    node: `${os.hostname()}:${process.pid}`,
  });
  warningsToLog(log);
  const node = await startApiNode(args, env, log);
  stopOnSignals(log, () => node.close(), 20_000);
  process.stdout.write(`Article Audio team API node listening on ${node.url}\n`);
}

export interface RunningWorker {
  worker: Worker;
  /** The address of its /metrics server (--metrics-port), if it has one. */
  metricsUrl?: string;
  stop(): Promise<void>;
}

/** Starts a synthesis worker (tests pass another pipeline). */
export async function startWorker(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { pipeline?: ArticlePipeline; log?: Logger } = {},
): Promise<RunningWorker> {
  const team = splitTeamArgs(args, env);
  const storageSpec = requireStorage(team, 'worker');
  // A worker serves no HTTP, so it needs no API token; the engine settings parser insists on one.
  const settings = readEngineSettings(
    team.rest,
    { ...env, ARTICLE_AUDIO_TOKENS: 'worker-serves-no-requests' },
    { port: 0 },
  );
  const log =
    options.log ??
    teamLogger(settings.logLevel, team.json, { role: 'worker', node: `${os.hostname()}:${process.pid}` });
  await checkWorkDir(team.workDir);
  await sweepRunFolders(team.workDir, log);
  const engine = settings.engine;
  const concurrency = engine.concurrency ?? Math.max(1, Math.min(4, os.availableParallelism()));
  const db = team.db as DbConnection;
  const pool = openPool(db, log, team.dbPoolSize ?? concurrency * 2 + 2);
  await migrateOrClose(pool, log);
  // The lease is the fleet's (fleet-settings.ts): the first worker stores its own; the others use the stored one.
  const node = `${os.hostname()}:${process.pid}`;
  let leaseMs: number;
  try {
    const fleet = await agreeOnSettings(
      pool,
      flagGiven(args, env, 'lease-s') ? { 'lease-s': team.leaseMs / 1000 } : {},
      { 'lease-s': team.leaseMs / 1000 },
      node,
      log,
    );
    leaseMs = Math.round(fleet['lease-s'] * 1000);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  const storage = await openOutputStorage(storageSpec, team.s3Endpoint);
  const metrics = new EngineMetrics('worker');
  const worker = new Worker({
    pool,
    databaseUrl: db,
    storage,
    pipeline: options.pipeline ?? createDefaultPipeline({ voices: settings.voices }),
    concurrency,
    leaseMs,
    maxCrashes: engine.maxCrashes ?? 3,
    progressIntervalMs: engine.progressIntervalMs ?? 250,
    // Off unless --allow-private-network: a team service must not fetch its own network for its clients (SSRF).
    fetchLimits: {
      ...DEFAULT_FETCH_LIMITS,
      ...engine.fetchLimits,
      allowPrivateNetwork: engine.allowPrivateNetwork ?? false,
      allowedHosts: engine.fetchAllowedHosts ?? [],
    },
    workDir: team.workDir,
    stopTimeoutMs: team.stopGraceMs,
    version,
    log,
    metrics,
  });
  const metricsServer =
    team.metricsPort === undefined
      ? undefined
      : await serveMetrics(metrics, engine.host ?? '127.0.0.1', team.metricsPort, log);
  await worker.start();
  let stopped: Promise<void> | undefined;
  return {
    worker,
    ...(metricsServer ? { metricsUrl: metricsServer.url } : {}),
    stop() {
      stopped ??= (async () => {
        await worker.stop();
        await metricsServer?.close();
        await storage.close();
        await pool.end();
        log('info', 'Stopped.');
      })();
      return stopped;
    },
  };
}

/** `article-audio worker …` as a process (tests start it with the test pipeline). */
export async function runWorkerProcess(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  pipeline?: ArticlePipeline,
): Promise<void> {
  const team = splitTeamArgs(args, env);
  const settings = readEngineSettings(
    team.rest,
    { ...env, ARTICLE_AUDIO_TOKENS: 'worker-serves-no-requests' },
    { port: 0 },
  );
  const log = teamLogger(settings.logLevel, team.json, { role: 'worker', node: `${os.hostname()}:${process.pid}` });
  warningsToLog(log);
  // What the worker and its libraries create (scratch runs, output files on their way) is this user's only.
  process.umask(0o077);
  const running = await startWorker(args, env, { log, ...(pipeline ? { pipeline } : {}) });
  stopOnSignals(log, () => running.stop(), team.stopGraceMs + 20_000);
  if (running.metricsUrl) process.stdout.write(`Worker metrics on ${running.metricsUrl}/metrics\n`);
  process.stdout.write(`Article Audio worker ${running.worker.id} started\n`);
}

/** Whether a setting was given to this node (flag or environment), not only defaulted. */
function flagGiven(rest: readonly string[], env: NodeJS.ProcessEnv, flag: string): boolean {
  const variable = `ARTICLE_AUDIO_${flag.toUpperCase().replace(/-/g, '_')}`;
  return rest.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`)) || Boolean(env[variable]?.trim());
}

function logLevelOf(rest: readonly string[], env: NodeJS.ProcessEnv): LogLevel {
  const index = rest.indexOf('--log-level');
  const value = (index >= 0 ? rest[index + 1] : undefined) ?? env.ARTICLE_AUDIO_LOG_LEVEL ?? 'info';
  if (!ORDER.includes(value as LogLevel)) throw new UsageError(`--log-level must be one of ${ORDER.join(', ')}.`);
  return value as LogLevel;
}

/** `article-audio token add|list|remove [NAME] --database …`. */
export async function tokenCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const team = splitTeamArgs(args, env);
  if (!team.database) throw new UsageError('token needs --database postgres://… (or ARTICLE_AUDIO_DATABASE_URL).');
  const admin = team.rest.includes('--admin');
  const [action, name, ...extra] = team.rest.filter((a) => a !== '--admin');
  if (action === undefined || extra.length > 0)
    throw new UsageError('Usage: article-audio token add NAME [--admin] | list | remove NAME --database postgres://…');
  const pool = openPool(team.db as DbConnection, () => undefined, 1);
  try {
    await migrate(pool, { programVersion: version });
    await manageTokens(pool, action, name, (line) => process.stdout.write(`${line}\n`), { admin });
  } finally {
    await pool.end();
  }
}

/** `article-audio settings [list] | set NAME VALUE --database …`: the fleet-wide settings (fleet-settings.ts). */
export async function settingsCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const team = splitTeamArgs(args, env);
  if (!team.database) throw new UsageError('settings needs --database postgres://… (or ARTICLE_AUDIO_DATABASE_URL).');
  const pool = openPool(team.db as DbConnection, () => undefined, 1);
  try {
    await migrate(pool, { programVersion: version });
    const done = await manageSettings(pool, team.rest, `article-audio settings on ${os.hostname()}`, (line) =>
      process.stdout.write(`${line}\n`),
    );
    if (!done) throw new UsageError('Usage: article-audio settings [list] | set NAME VALUE --database postgres://…');
  } finally {
    await pool.end();
  }
}

/** `article-audio workers --database … [--json]`: the workers, alive or gone, and their jobs. */
export async function workersCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const team = splitTeamArgs(args, env);
  if (!team.database) throw new UsageError('workers needs --database postgres://… (or ARTICLE_AUDIO_DATABASE_URL).');
  const json = team.rest.includes('--json');
  const extra = team.rest.filter((a) => a !== '--json');
  if (extra.length > 0) throw new UsageError(`Usage: article-audio workers --database postgres://… [--json]`);
  const pool = openPool(team.db as DbConnection, () => undefined, 1);
  try {
    await migrate(pool, { programVersion: version });
    const workers = await listWorkers(pool);
    process.stdout.write(json ? `${JSON.stringify(workers, null, 2)}\n` : `${workersTable(workers).join('\n')}\n`);
  } finally {
    await pool.end();
  }
}
