// `article-audio serve`: the engine in the foreground, for a team, a script or a remote box.
import { runEngineProcess } from '../engine/engine-process';
import { ENGINE_SETTINGS, SHARED_SERVICE_DEFAULTS, UsageError, settingsHelp } from '../engine/settings';
import { TEAM_SETTINGS, teamSettingsHelp } from '../engine/team/settings-help';
import { WORKER_ENGINE_FLAGS } from './worker';

/** The engine flags a team API node reads (the others are the local engine's or a worker's). */
export const API_NODE_ENGINE_FLAGS: readonly string[] = [
  'host',
  'port',
  'tokens-file',
  'queue-depth',
  'retention-s',
  'heartbeat-s',
  'max-body-bytes',
  'idempotency-window-s',
  'public-url',
  'max-connections',
  'idle-socket-timeout-s',
  'token-submit-rate',
  'token-max-jobs',
  'min-free-disk-mb',
  'log-level',
];

export const SERVE_HELP = `Usage: article-audio serve [options]

Runs the Article Audio job service (the local engine) until Ctrl+C or SIGTERM, which stop it cleanly:
running jobs go back to the queue and run again at the next start, open streams get a final event.
Clients authenticate with a token from ARTICLE_AUDIO_TOKENS (comma-separated) or --tokens-file.
It prints the address it listens on; the log goes to stderr.

Options (each also an environment variable):
${settingsHelp()}
  -h, --help  show this help

Example:
  ARTICLE_AUDIO_TOKENS=$(openssl rand -hex 16) article-audio serve --port 8787

Team mode (one service for many users on several machines; see README "Run a team service"):
  article-audio serve --database postgres://… --storage DIR|s3://bucket/prefix [options]
runs an API node (HTTP only; jobs go to Postgres) and \`article-audio worker\` runs synthesis; any number of each.
\`article-audio serve --database URL --help\` lists the options of a team API node.`;

export const SERVE_TEAM_HELP = `Usage: article-audio serve --database postgres://… --storage DIR|s3://bucket/prefix [options]

Runs an API node of a team service (see README "Run a team service"): HTTP only; jobs go to Postgres, where
\`article-audio worker\` processes claim them; any number of each. Ctrl+C or SIGTERM stops it cleanly.
Clients authenticate with tokens kept in the database (\`article-audio token add NAME\`), ARTICLE_AUDIO_TOKENS or
--tokens-file. GET /healthz answers while the process runs; GET /readyz only while it reaches Postgres and storage.
The log goes to stderr, one JSON object per line. Retention, queue depth and token limits are fleet-wide: the
first API node stores them; see \`article-audio settings --help\`.

Team options (each also an environment variable):
${teamSettingsHelp('api')}

Options of an API node (each also an environment variable):
${settingsHelp(API_NODE_ENGINE_FLAGS)}
  -h, --help  show this help`;

/** Team mode: --database given, or ARTICLE_AUDIO_DATABASE_URL set. */
export function isTeamMode(args: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return args.some((a) => a === '--database' || a.startsWith('--database=')) || Boolean(env.ARTICLE_AUDIO_DATABASE_URL);
}

/** Whose a flag is when a team API node does not read it: the local engine's or a worker's; undefined: the node's own. */
export function foreignApiFlag(flag: string): 'local' | 'worker' | undefined {
  if (API_NODE_ENGINE_FLAGS.includes(flag)) return undefined;
  const team = TEAM_SETTINGS.find((s) => s.flag === flag);
  if (team) return team.roles.includes('api') ? undefined : 'worker';
  if (WORKER_ENGINE_FLAGS.includes(flag)) return 'worker';
  return ENGINE_SETTINGS.some((s) => s.flag === flag) ? 'local' : undefined;
}

/**
 * A team API node refuses a flag of the local engine (--data-dir, --lock-wait-s…) or of a worker (--concurrency,
 * --lease-s…): it would read none of them, and an admin who gives one expects it to do something. Only flags on the
 * command line: an environment shared by every role may hold a worker's variables.
 */
export function refuseForeignApiFlags(args: readonly string[]): void {
  for (const arg of args) {
    const flag = /^--([a-z0-9-]+)(?:=|$)/.exec(arg)?.[1];
    const whose = flag === undefined ? undefined : foreignApiFlag(flag);
    if (whose === undefined) continue;
    throw new UsageError(
      whose === 'worker'
        ? `--${flag} is a worker's flag (article-audio worker) and means nothing to a team API node (serve --database): give it to the workers. \`article-audio serve --database URL --help\` lists an API node's flags.`
        : `--${flag} is a flag of the local engine and means nothing in team mode (serve --database): jobs and events live in Postgres, files in --storage. Leave it out; \`article-audio serve --database URL --help\` lists an API node's flags.`,
    );
  }
}

/** `args` without the flags (and their values) a team API node refuses, for a caller with one list for all roles. */
export function apiNodeArgs(args: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const match = /^--([a-z0-9-]+)(=)?/.exec(arg);
    if (!match?.[1] || foreignApiFlag(match[1]) === undefined) {
      kept.push(arg);
      continue;
    }
    const kind = ENGINE_SETTINGS.find((s) => s.flag === match[1])?.kind;
    if (!match[2] && kind !== 'flag' && kind !== 'switch') i++;
  }
  return kept;
}

export async function serve(args: readonly string[]): Promise<void> {
  if (isTeamMode(args, process.env)) {
    refuseForeignApiFlags(args);
    // Loaded only here: the Postgres driver and the AWS SDK are not part of the local engine.
    const team = await import('../engine/team/main');
    await team.serveTeam(args, process.env);
    return;
  }
  await runEngineProcess({
    args,
    env: process.env,
    defaultPort: 8787,
    // A service others reach must not fetch from its own network for them (SSRF; --allow-private-network opts in),
    // and limits what each client may use.
    serviceDefaults: SHARED_SERVICE_DEFAULTS,
    announce(url, dataDir) {
      process.stdout.write(
        `Article Audio engine listening on ${url}\nJobs are kept in ${dataDir}. Stop with Ctrl+C.\n`,
      );
    },
  });
}
