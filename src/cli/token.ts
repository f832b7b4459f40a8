// `article-audio token`: a team service's API tokens (the command itself is in engine/team/main.ts, loaded only
// when it runs, so that --help never loads the Postgres driver).
import { teamSettingsHelp } from '../engine/team/settings-help';

export const TOKEN_HELP = `Usage: article-audio token add NAME [--admin] --database postgres://…
       article-audio token list --database postgres://…
       article-audio token remove NAME --database postgres://…

A team service's API tokens, one per user, kept in its database (only each token's SHA-256; the value is printed
once, by add). API nodes re-read the table, so adding or removing one needs no restart.

  add NAME     make a token for NAME (letters, digits and . _ @ -) and print its value once
  --admin      with add: the token may also use the admin endpoints of API nodes (GET /v1/admin/workers)
  list         each token's name, when it was made and whether it is an admin token (never the values)
  remove NAME  revoke NAME's token

Options (each also an environment variable):
${teamSettingsHelp('admin')}
  -h, --help  show this help`;
