// Runs the command line (dist/cli.js) the way a user's shell does, for the engine's black-box tests.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './engine-process';
import { markerEnv, ownProcess } from './own-processes.mjs';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Added to the environment, which has none of this process's ARTICLE_AUDIO_* variables. */
  env?: Record<string, string>;
  /** The working directory (the repository when not given). */
  cwd?: string;
  /** Written to its standard input, which is then closed (empty when not given). */
  stdin?: string;
  /** A run still going after this long is killed (its test then fails on the exit code): a hang guard, no budget. */
  killAfterMs?: number;
}

/** Runs `article-audio ...args` to its end; the process is this test file's (killed with it, whatever happens). */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('ARTICLE_AUDIO_')));
  const child = ownProcess(
    spawn(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...clean, ...markerEnv(), ...options.env },
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.stdin ?? '');
  const timer =
    options.killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}
