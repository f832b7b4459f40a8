// The team service's own flags (settings.ts has the engine's): the table behind parsing and --help. Kept apart from
// main.ts so that `--help` never loads the Postgres driver or the AWS SDK.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { UsageError } from '../settings';
import type { DbConnection } from './db';

/** Who reads a flag: a team API node (`serve --database`), a worker, or the admin commands (token, workers, settings). */
export type TeamRole = 'api' | 'worker' | 'admin';

export interface TeamFlag {
  flag: string;
  env: string;
  value: string;
  help: string;
  roles: readonly TeamRole[];
}

const ALL: readonly TeamRole[] = ['api', 'worker', 'admin'];
const NODES: readonly TeamRole[] = ['api', 'worker'];

export const TEAM_SETTINGS: readonly TeamFlag[] = [
  {
    flag: 'database',
    env: 'ARTICLE_AUDIO_DATABASE_URL',
    value: 'URL',
    help: 'postgres://user:password@host:5432/db: jobs, events and the queue live there (team mode)',
    roles: ALL,
  },
  {
    flag: 'db-pool-size',
    env: 'ARTICLE_AUDIO_DB_POOL_SIZE',
    value: 'N',
    help: 'Postgres connections this node keeps open at most, besides its one LISTEN connection (default: API node 10, worker 2 x concurrency + 2; 2 to 1000)',
    roles: NODES,
  },
  {
    flag: 'db-statement-timeout-s',
    env: 'ARTICLE_AUDIO_DB_STATEMENT_TIMEOUT_S',
    value: 'S',
    help: "Postgres cancels any statement of this node that runs longer (statement_timeout; default: the server's or role's setting; 0: none)",
    roles: ALL,
  },
  {
    flag: 'db-ssl-mode',
    env: 'ARTICLE_AUDIO_DB_SSL_MODE',
    value: 'disable|require|verify-full',
    help: "TLS to Postgres: require encrypts without checking the server's certificate (with --db-ca-file: checks its chain, not its name); verify-full checks it (against --db-ca-file or the system CAs) and its host name (default: sslmode in the URL, else verify-full with --db-ca-file, else disable)",
    roles: ALL,
  },
  {
    flag: 'db-ca-file',
    env: 'ARTICLE_AUDIO_DB_CA_FILE',
    value: 'FILE',
    help: "PEM file of the CA that signed the Postgres server's certificate (implies TLS)",
    roles: ALL,
  },
  {
    flag: 'storage',
    env: 'ARTICLE_AUDIO_STORAGE',
    value: 'DIR|s3://BUCKET/PREFIX',
    help: 'where output files go: a folder every node mounts, or S3-compatible storage',
    roles: NODES,
  },
  {
    flag: 's3-endpoint',
    env: 'ARTICLE_AUDIO_S3_ENDPOINT',
    value: 'URL',
    help: 'S3-compatible endpoint (MinIO, Ceph, R2…), path-style; credentials from the usual AWS_* variables',
    roles: NODES,
  },
  {
    flag: 'lease-s',
    env: 'ARTICLE_AUDIO_LEASE_S',
    value: 'S',
    help: 'worker: how long a job stays claimed without a heartbeat before another worker takes it (default 30); fleet-wide: the first worker stores it, the others use the stored value (`article-audio settings`)',
    roles: ['worker'],
  },
  {
    flag: 'stop-grace-s',
    env: 'ARTICLE_AUDIO_STOP_GRACE_S',
    value: 'S',
    help: 'worker: on SIGTERM, running jobs may finish for this long; then they go back to the queue for another worker (default 10)',
    roles: ['worker'],
  },
  {
    flag: 'work-dir',
    env: 'ARTICLE_AUDIO_WORK_DIR',
    value: 'DIR',
    help: `worker: local scratch folder for runs (default ${os.tmpdir()})`,
    roles: ['worker'],
  },
  {
    flag: 'metrics-port',
    env: 'ARTICLE_AUDIO_METRICS_PORT',
    value: 'N',
    help: 'worker: serve GET /metrics (Prometheus) on this port, on the --host address (default 127.0.0.1); off by default',
    roles: ['worker'],
  },
  {
    flag: 'log-format',
    env: 'ARTICLE_AUDIO_LOG_FORMAT',
    value: 'json|text',
    help: 'team nodes log one JSON object per line by default',
    roles: NODES,
  },
];

/** The team flags a role reads, for its --help. */
export function teamSettingsHelp(role: TeamRole): string {
  const rows = TEAM_SETTINGS.filter((s) => s.roles.includes(role)).map((s) => [
    `--${s.flag} ${s.value}`,
    s.help,
    s.env,
  ]);
  const width = Math.max(...rows.map(([flag]) => (flag ?? '').length));
  return rows
    .map(([flag = '', help, env]) => `  ${flag.padEnd(width)}  ${help}\n  ${''.padEnd(width)}  env ${env}`)
    .join('\n');
}

export interface TeamArgs {
  database?: string;
  storage?: string;
  s3Endpoint?: string;
  leaseMs: number;
  /** How long a stopping worker lets its running jobs finish before it gives them back. */
  stopGraceMs: number;
  workDir: string;
  /** Worker: the port of its /metrics server; undefined: none. */
  metricsPort: number | undefined;
  json: boolean;
  /** The address with the --db-* connection options (TLS, statement timeout). */
  db?: DbConnection;
  /** --db-pool-size; undefined: the role's default. */
  dbPoolSize: number | undefined;
  /** The engine's own flags, for readEngineSettings. */
  rest: string[];
}

/** Takes the team flags out of the arguments (a flag wins over its environment variable). */
export function splitTeamArgs(args: readonly string[], env: NodeJS.ProcessEnv): TeamArgs {
  const found = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const match = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(arg);
    const setting = match ? TEAM_SETTINGS.find((s) => s.flag === match[1]) : undefined;
    if (!match || !setting) {
      rest.push(arg);
      continue;
    }
    const value = match[2] ?? args[++i];
    if (value === undefined || value === '')
      throw new UsageError(`--${setting.flag} needs a value (${setting.value}).`);
    found.set(setting.flag, value);
  }
  const get = (flag: string) => {
    const setting = TEAM_SETTINGS.find((s) => s.flag === flag) as TeamFlag;
    const value = found.get(flag) ?? env[setting.env];
    return value === undefined || value === '' ? undefined : value;
  };
  const lease = get('lease-s');
  if (lease !== undefined && !(/^\d{1,6}(\.\d{1,3})?$/.test(lease) && Number(lease) > 0))
    throw new UsageError(`--lease-s must be a positive number of seconds, not "${lease}".`);
  const grace = get('stop-grace-s');
  if (grace !== undefined && !/^\d{1,6}(\.\d{1,3})?$/.test(grace))
    throw new UsageError(`--stop-grace-s must be a number of seconds, not "${grace}".`);
  const metricsPort = get('metrics-port');
  if (metricsPort !== undefined && !/^\d{1,5}$/.test(metricsPort))
    throw new UsageError(`--metrics-port must be a port number, not "${metricsPort}".`);
  const format = get('log-format') ?? 'json';
  if (format !== 'json' && format !== 'text') throw new UsageError('--log-format must be json or text.');
  const database = get('database');
  if (database !== undefined && !/^postgres(ql)?:\/\//.test(database))
    throw new UsageError('--database must be a postgres:// address.');
  const poolSize = get('db-pool-size');
  if (poolSize !== undefined && !(/^\d{1,4}$/.test(poolSize) && Number(poolSize) >= 2 && Number(poolSize) <= 1000))
    throw new UsageError(`--db-pool-size must be a whole number from 2 to 1000, not "${poolSize}".`);
  const storage = get('storage');
  const s3Endpoint = get('s3-endpoint') ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  return {
    ...(database !== undefined ? { database } : {}),
    ...(storage !== undefined ? { storage } : {}),
    ...(s3Endpoint !== undefined && s3Endpoint !== '' ? { s3Endpoint } : {}),
    leaseMs: Math.round(Number(lease ?? 30) * 1000),
    stopGraceMs: Math.round(Number(grace ?? 10) * 1000),
    workDir: get('work-dir') ?? os.tmpdir(),
    metricsPort: metricsPort === undefined ? undefined : Number(metricsPort),
    json: format === 'json',
    ...(database !== undefined ? { db: dbConnection(database, get) } : {}),
    dbPoolSize: poolSize === undefined ? undefined : Number(poolSize),
    rest,
  };
}

/**
 * The --db-* flags on top of the address. TLS given by flags goes to node-postgres as `ssl` options; the address's
 * own `sslmode`/`sslrootcert` would override them there (pg reads the address last), so both at once are refused.
 * A CA file is read now: a missing one stops the start with the flag's name, not at the first connection.
 */
function dbConnection(url: string, get: (flag: string) => string | undefined): DbConnection {
  const timeout = get('db-statement-timeout-s');
  if (timeout !== undefined && !/^\d{1,6}(\.\d{1,3})?$/.test(timeout))
    throw new UsageError(`--db-statement-timeout-s must be a number of seconds (0: none), not "${timeout}".`);
  const mode = get('db-ssl-mode');
  if (mode !== undefined && !['disable', 'require', 'verify-full'].includes(mode))
    throw new UsageError(`--db-ssl-mode must be disable, require or verify-full, not "${mode}".`);
  const caFile = get('db-ca-file');
  if (caFile !== undefined && mode === 'disable')
    throw new UsageError('--db-ca-file needs TLS: leave out --db-ssl-mode disable, or the CA file.');
  let urlParams: URLSearchParams;
  try {
    urlParams = new URL(url).searchParams;
  } catch {
    throw new UsageError('--database is not a valid postgres:// address.');
  }
  const inUrl = ['sslmode', 'ssl', 'sslrootcert', 'sslcert', 'sslkey'].filter((p) => urlParams.has(p));
  if ((mode !== undefined || caFile !== undefined) && inUrl.length > 0)
    throw new UsageError(
      `TLS is set twice: the --database address has ${inUrl.join(', ')} and --db-ssl-mode/--db-ca-file are given. Use one of the two.`,
    );
  let ca: string | undefined;
  if (caFile !== undefined) {
    try {
      ca = readFileSync(caFile, 'utf8');
    } catch (error) {
      throw new UsageError(
        `--db-ca-file ${caFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`,
      );
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----'))
      throw new UsageError(`--db-ca-file ${caFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----).`);
  }
  const effective = mode ?? (caFile !== undefined ? 'verify-full' : undefined);
  const ssl: DbConnection['ssl'] =
    effective === undefined
      ? undefined
      : effective === 'disable'
        ? false
        : effective === 'verify-full'
          ? { ...(ca !== undefined ? { ca } : {}), rejectUnauthorized: true }
          : ca !== undefined
            ? // libpq's require with a root certificate: the chain is checked, the host name is not.
              { ca, rejectUnauthorized: true, checkServerIdentity: () => undefined }
            : { rejectUnauthorized: false };
  return {
    url,
    ...(ssl !== undefined ? { ssl } : {}),
    ...(timeout !== undefined ? { statementTimeoutMs: Math.round(Number(timeout) * 1000) } : {}),
  };
}
