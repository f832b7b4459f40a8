// `article-audio serve`: the engine in the foreground, for a team, a script or a remote box.
import { runEngineProcess } from '../engine/engine-process';
import { SHARED_SERVICE_DEFAULTS, settingsHelp } from '../engine/settings';
import { teamSettingsHelp } from '../engine/team/settings-help';

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
Team options (each also an environment variable):
${teamSettingsHelp()}`;

export async function serve(args: readonly string[]): Promise<void> {
  if (args.some((a) => a === '--database' || a.startsWith('--database=')) || process.env.ARTICLE_AUDIO_DATABASE_URL) {
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
