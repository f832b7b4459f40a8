// `article-audio serve`: the engine in the foreground, for a team, a script or a remote box.
import { runEngineProcess } from '../engine/engine-process';
import { settingsHelp } from '../engine/settings';

export const SERVE_HELP = `Usage: article-audio serve [options]

Runs the Article Audio job service (the local engine) until Ctrl+C or SIGTERM, which stop it cleanly:
running jobs go back to the queue and run again at the next start, open streams get a final event.
Clients authenticate with a token from ARTICLE_AUDIO_TOKENS (comma-separated) or --tokens-file.
It prints the address it listens on; the log goes to stderr.

Options (each also an environment variable):
${settingsHelp()}
  -h, --help  show this help

Example:
  ARTICLE_AUDIO_TOKENS=$(openssl rand -hex 16) article-audio serve --port 8787`;

export async function serve(args: readonly string[]): Promise<void> {
  await runEngineProcess({
    args,
    env: process.env,
    defaultPort: 8787,
    announce(url, dataDir) {
      process.stdout.write(`Article Audio engine listening on ${url}\nJobs are kept in ${dataDir}. Stop with Ctrl+C.\n`);
    },
  });
}
