// Entry of dist/cli.js, the `article-audio` command: `serve` runs the engine, `convert` turns one article into an
// MP3 and its transcript. Exit codes are listed in EXIT (exit-codes.ts) and in --help.
import { version } from '../../package.json';
import { UsageError } from '../engine/settings';
import { EXIT, EXIT_CODES_HELP } from './exit-codes';
import { TOKEN_HELP } from './token';
import { SETTINGS_HELP } from './settings';
import { WORKERS_HELP } from './workers';

const HELP = `Usage: article-audio <command> [options]

Commands:
  convert <url | file | ->  turn an article into an MP3 and a transcript (the main job)
  serve                     run the job service (the local engine, or a team API node with --database)
  worker                    run a synthesis worker of a team service (Postgres)
  token add NAME | list | remove NAME   manage a team service's API tokens in its database (--database)
  workers [--json]          list a team service's workers (alive or gone), their jobs and last heartbeat (--database)
  settings [list] | set NAME VALUE   a team service's fleet-wide settings, stored in its database (--database)
  help [command]            show help for a command

Run \`article-audio <command> --help\` for its options.

${EXIT_CODES_HELP}`;

/**
 * Each command's module is loaded by that command only (`await import`, which the bundle turns into a deferred
 * evaluation): `serve` would otherwise also evaluate `convert`'s HTML and Markdown readers, and `token`, `--version`
 * or `help` the whole engine (undici, the pipeline, the metrics): 0.15-0.2 s of CPU at every start.
 */
async function main(argv: readonly string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  const wantsHelp = rest.includes('--help') || rest.includes('-h');
  switch (command) {
    case undefined:
    case 'help':
    case '--help':
    case '-h': {
      const topic = command === 'help' ? rest[0] : undefined;
      const [{ CONVERT_HELP }, { SERVE_HELP, SERVE_TEAM_HELP, isTeamMode }, { WORKER_HELP }] = await Promise.all([
        import('./convert'),
        import('./serve'),
        import('./worker'),
      ]);
      const topics: Record<string, string> = {
        serve: isTeamMode(rest, process.env) ? SERVE_TEAM_HELP : SERVE_HELP,
        worker: WORKER_HELP,
        token: TOKEN_HELP,
        workers: WORKERS_HELP,
        settings: SETTINGS_HELP,
        convert: CONVERT_HELP,
      };
      process.stdout.write(`${(topic !== undefined ? topics[topic] : undefined) ?? HELP}\n`);
      return command === undefined ? EXIT.usage : EXIT.ok;
    }
    case '--version':
    case '-v':
      process.stdout.write(`${version}\n`);
      return EXIT.ok;
    case 'serve': {
      const { SERVE_HELP, SERVE_TEAM_HELP, isTeamMode, serve } = await import('./serve');
      if (wantsHelp) {
        process.stdout.write(`${isTeamMode(rest, process.env) ? SERVE_TEAM_HELP : SERVE_HELP}\n`);
        return EXIT.ok;
      }
      await serve(rest);
      return undefined; // runs until a signal ends the process
    }
    case 'worker': {
      const { WORKER_HELP, worker } = await import('./worker');
      if (wantsHelp) {
        process.stdout.write(`${WORKER_HELP}\n`);
        return EXIT.ok;
      }
      await worker(rest);
      return undefined; // runs until a signal ends the process
    }
    case 'token': {
      if (wantsHelp) {
        process.stdout.write(`${TOKEN_HELP}\n`);
        return EXIT.ok;
      }
      // Loaded only here: the Postgres driver is not part of the local engine.
      const team = await import('../engine/team/main');
      await team.tokenCommand(rest, process.env);
      return EXIT.ok;
    }
    case 'workers': {
      if (wantsHelp) {
        process.stdout.write(`${WORKERS_HELP}\n`);
        return EXIT.ok;
      }
      const team = await import('../engine/team/main');
      await team.workersCommand(rest, process.env);
      return EXIT.ok;
    }
    case 'settings': {
      if (wantsHelp) {
        process.stdout.write(`${SETTINGS_HELP}\n`);
        return EXIT.ok;
      }
      const team = await import('../engine/team/main');
      await team.settingsCommand(rest, process.env);
      return EXIT.ok;
    }
    case 'convert': {
      const { CONVERT_HELP, convert } = await import('./convert');
      if (wantsHelp) {
        process.stdout.write(`${CONVERT_HELP}\n`);
        return EXIT.ok;
      }
      return convert(rest);
    }
    default:
      throw new UsageError(
        `Unknown command "${command}". Commands: convert, serve, worker, token, workers, settings, help.`,
      );
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`article-audio: ${message}\n`);
    if (error instanceof UsageError) process.stderr.write('Run `article-audio --help` for usage.\n');
    process.exitCode = error instanceof UsageError ? EXIT.usage : EXIT.failure;
  },
);
