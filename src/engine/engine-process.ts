// Runs the engine as a process of its own: `article-audio serve` and dist/engine.js (the process the extension
// starts) differ only in how they announce their address. Logs go to stderr; SIGINT/SIGTERM (and, when asked, the
// end of stdin) stop it cleanly with exit code 0; a second signal, or a stop that hangs, ends it at once.
import { createDefaultPipeline } from './core/default-pipeline';
import { type RunningEngine, startEngine } from './index';
import { type Logger, type LogLevel, textFields } from './core/logger';
import { readEngineSettings, type ServiceDefaults } from './settings';
import { traceMemory } from '../speech/threads/memory-trace';

export interface EngineProcessOptions {
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  defaultPort: number;
  /** Policy defaults a flag or the environment may override: one person's engine, or a service others reach. */
  serviceDefaults: ServiceDefaults;
  /** Tells whoever started the process where the engine listens. */
  announce(url: string, dataDir: string): void;
}

const STOP_DEADLINE_MS = 20_000;
const ORDER: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export function stderrLogger(minimum: LogLevel): Logger {
  const threshold = ORDER.indexOf(minimum);
  return (level, message, fields) => {
    if (ORDER.indexOf(level) >= threshold)
      process.stderr.write(`${new Date().toISOString()} ${level.padEnd(5)} ${message}${textFields(fields)}\n`);
  };
}

/** Starts the engine; throws (UsageError or a start failure) before anything was announced. */
export async function runEngineProcess(options: EngineProcessOptions): Promise<RunningEngine> {
  traceMemory('main'); // only with ARTICLE_AUDIO_MEMORY_TRACE (memory diagnostics)
  const settings = readEngineSettings(options.args, options.env, {
    port: options.defaultPort,
    ...options.serviceDefaults,
  });
  // Whatever the engine or its libraries create (jobs, outputs, scratch files) is readable by this user only.
  process.umask(0o077);
  const log = stderrLogger(settings.logLevel);
  const engine = await startEngine({
    ...settings.engine,
    pipeline: createDefaultPipeline({ voices: settings.voices }),
    log,
  });

  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) {
      log('warn', `${reason} again: exiting without finishing the stop.`);
      process.exit(1);
    }
    stopping = true;
    log('info', `${reason}: stopping.`);
    const deadline = setTimeout(() => {
      log('error', `The stop took longer than ${STOP_DEADLINE_MS / 1000} s; exiting.`);
      process.exit(1);
    }, STOP_DEADLINE_MS);
    deadline.unref();
    engine.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log('error', `The stop failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  if (settings.exitWithStdin) {
    process.stdin.on('end', () => stop('Standard input closed'));
    process.stdin.on('error', () => stop('Standard input failed'));
    process.stdin.resume();
  }
  options.announce(engine.url, settings.engine.dataDir);
  return engine;
}
