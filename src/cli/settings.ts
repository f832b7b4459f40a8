// `article-audio settings`: a team service's fleet-wide settings (the command itself is in engine/team/main.ts,
// loaded only when it runs, so that --help never loads the Postgres driver).
import { teamSettingsHelp } from '../engine/team/settings-help';

export const SETTINGS_HELP = `Usage: article-audio settings [list] --database postgres://…
       article-audio settings set NAME VALUE --database postgres://…

Settings every API node of a team service must agree on are stored once, in the database (table aa_settings). The
first API node of a database stores its own values (given or default); a node started later with a different value
logs a warning and uses the stored one, so one node can never delete what the others keep. API nodes re-read them
at every retention sweep (within a minute), so a change needs no restart. The lease is the workers': the first
worker stores its --lease-s (default 30), every worker reads the stored one at start and heartbeats every third of
it (at most 5 s); a change takes effect as workers restart.

  retention-s        seconds a finished job, its events and files are kept (default 86400)
  queue-depth        jobs waiting over the whole service before submissions get 429 (default 100)
  token-max-jobs     unfinished jobs one token may have at once; 0: no limit (default 20)
  token-submit-rate  submissions one token may make a minute; 0: no limit (default 60)
  lease-s            seconds a worker's claim holds without a heartbeat (default 30)

  list            (default) each setting, its value, who set it and when
  set NAME VALUE  change one for the whole fleet
  -h, --help      show this help

Options (each also an environment variable):
${teamSettingsHelp('admin')}`;
