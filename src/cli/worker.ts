// `article-audio worker`: a synthesis worker of a team service (Postgres + shared output storage).
import { settingsHelp } from '../engine/settings';
import { teamSettingsHelp } from '../engine/team/settings-help';

export const WORKER_HELP = `Usage: article-audio worker --database postgres://… --storage DIR|s3://bucket/prefix [options]

Runs a synthesis worker of a team service (see README "Run a team service"): it claims queued jobs from Postgres,
runs the speech pipeline and puts the files in the shared storage. Run as many as you like, on any machines.
SIGTERM or Ctrl+C stops it cleanly: running jobs may finish for 10 s, then go back to the queue for another
worker. A worker that dies loses its jobs' leases; another worker runs them again from the start.
The log goes to stderr, one JSON object per line.

Team options (each also an environment variable):
${teamSettingsHelp()}

Engine options a worker uses: --concurrency, --max-crashes, --progress-interval-s, --fetch-max-bytes,
--fetch-timeout-s, --fetch-max-redirects, --log-level (the others are for API nodes):
${settingsHelp()}
  -h, --help  show this help`;

export async function worker(args: readonly string[]): Promise<void> {
  // Loaded only here: the Postgres driver and the AWS SDK are not part of the local engine.
  const team = await import('../engine/team/main');
  await team.runWorkerProcess(args, process.env);
}
