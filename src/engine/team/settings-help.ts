// The team service's own flags (settings.ts has the engine's): the table behind parsing and --help. Kept apart from
// main.ts so that `--help` never loads the Postgres driver or the AWS SDK.
import os from 'node:os';
import { UsageError } from '../settings';

export interface TeamFlag {
  flag: string;
  env: string;
  value: string;
  help: string;
}

export const TEAM_SETTINGS: readonly TeamFlag[] = [
  {
    flag: 'database',
    env: 'ARTICLE_AUDIO_DATABASE_URL',
    value: 'URL',
    help: 'postgres://user:password@host:5432/db: jobs, events and the queue live there (team mode)',
  },
  {
    flag: 'storage',
    env: 'ARTICLE_AUDIO_STORAGE',
    value: 'DIR|s3://BUCKET/PREFIX',
    help: 'where output files go: a folder every node mounts, or S3-compatible storage',
  },
  {
    flag: 's3-endpoint',
    env: 'ARTICLE_AUDIO_S3_ENDPOINT',
    value: 'URL',
    help: 'S3-compatible endpoint (MinIO, Ceph, R2…), path-style; credentials from the usual AWS_* variables',
  },
  {
    flag: 'lease-s',
    env: 'ARTICLE_AUDIO_LEASE_S',
    value: 'S',
    help: 'worker: how long a job stays claimed without a heartbeat before another worker takes it (default 30)',
  },
  {
    flag: 'stop-grace-s',
    env: 'ARTICLE_AUDIO_STOP_GRACE_S',
    value: 'S',
    help: 'worker: on SIGTERM, running jobs may finish for this long; then they go back to the queue for another worker (default 10)',
  },
  {
    flag: 'work-dir',
    env: 'ARTICLE_AUDIO_WORK_DIR',
    value: 'DIR',
    help: `worker: local scratch folder for runs (default ${os.tmpdir()})`,
  },
  {
    flag: 'metrics-port',
    env: 'ARTICLE_AUDIO_METRICS_PORT',
    value: 'N',
    help: 'worker: serve GET /metrics (Prometheus) on this port, on the --host address (default 127.0.0.1); off by default',
  },
  {
    flag: 'log-format',
    env: 'ARTICLE_AUDIO_LOG_FORMAT',
    value: 'json|text',
    help: 'team nodes log one JSON object per line by default',
  },
];

export function teamSettingsHelp(): string {
  const rows = TEAM_SETTINGS.map((s) => [`--${s.flag} ${s.value}`, s.help, s.env]);
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
    rest,
  };
}
