// `article-audio worker`: a synthesis worker of a team service (Postgres + shared output storage).
import { settingsHelp } from '../engine/settings';
import { teamSettingsHelp } from '../engine/team/settings-help';

/** The engine flags a worker reads (--host only for its --metrics-port server). */
export const WORKER_ENGINE_FLAGS: readonly string[] = [
  'host',
  'voices',
  'concurrency',
  'fetch-max-bytes',
  'fetch-timeout-s',
  'fetch-max-redirects',
  'progress-interval-s',
  'max-crashes',
  'allow-private-network',
  'fetch-allow-hosts',
  'log-level',
];

export const WORKER_HELP = `Usage: article-audio worker --database postgres://… --storage DIR|s3://bucket/prefix [options]

Runs a synthesis worker of a team service (see README "Run a team service"): it claims queued jobs from Postgres,
fetches the articles, runs the speech pipeline and puts the files in the shared storage. Run as many as you like,
on any machines. It listens on no port (unless --metrics-port). SIGTERM or Ctrl+C stops it cleanly: running jobs
may finish for --stop-grace-s, then go back to the queue for another worker. A worker that dies loses its jobs'
leases; another worker runs them again from the start. The log goes to stderr, one JSON object per line.
Workers fetch the articles, so --allow-private-network and --fetch-allow-hosts belong here, not on API nodes.

Team options (each also an environment variable):
${teamSettingsHelp('worker')}

Options of a worker (each also an environment variable):
${settingsHelp(WORKER_ENGINE_FLAGS)}
  -h, --help  show this help`;

export async function worker(args: readonly string[]): Promise<void> {
  // Loaded only here: the Postgres driver and the AWS SDK are not part of the local engine.
  const team = await import('../engine/team/main');
  await team.runWorkerProcess(args, process.env);
}
