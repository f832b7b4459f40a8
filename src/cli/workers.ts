// `article-audio workers`: lists a team service's workers (the command itself is in engine/team/main.ts, loaded
// only when it runs, so that --help never loads the Postgres driver).
import { teamSettingsHelp } from '../engine/team/settings-help';

export const WORKERS_HELP = `Usage: article-audio workers --database postgres://… [--json]

Lists the synthesis workers of a team service from its database: each worker's id (host:pid:suffix), whether it is
alive or gone (no heartbeat for two intervals: killed, its machine down, or cut off from the database), its last
heartbeat, when it started, its version and the jobs it was running (count/concurrency and ids). A worker that
stops cleanly removes itself; gone workers are listed for 24 hours. --json prints the same as a JSON array.

  --json      JSON instead of a table
  -h, --help  show this help

Options (each also an environment variable):
${teamSettingsHelp('admin')}`;
