// Bundle sizes of the release build and the .vsix, made by `npm run package` in a copy of the repo (the release
// build empties dist/, which would disturb anyone using this checkout's dist/ meanwhile), and the activation time of
// that release build in real VS Code (the test VS Code: code-server in headless Chromium, installed by the test
// command's scripts/test-env.mjs on first use).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './lib/articles';
import { type Bench, type Row, below } from './lib/report';

const EXTENSION_TARGET_KB = 400;
const SKIP = new Set(['node_modules', 'dist', 'out', '.git', 'test-results', '.vscode-test', '.bench']);

const kb = (bytes: number) => `${Math.round(bytes / 1024).toLocaleString('en-US')} KB`;

export const extension: Bench = {
  name: 'extension',
  title: 'Extension: bundle sizes (release build) and the .vsix',
  async run(options) {
    options.progress('extension: npm run package in a copy of the repo');
    const work = mkdtempSync(path.join(os.tmpdir(), 'article-audio-bench-package-'));
    try {
      for (const name of readdirSync(repoRoot)) {
        if (!SKIP.has(name)) cpSync(path.join(repoRoot, name), path.join(work, name), { recursive: true });
      }
      symlinkSync(path.join(repoRoot, 'node_modules'), path.join(work, 'node_modules'), 'dir');
      execFileSync('npm', ['run', 'package', '--silent'], {
        cwd: work,
        stdio: 'pipe',
        env: { ...process.env, npm_config_loglevel: 'error' },
      });
      const size = (file: string) => statSync(path.join(work, file)).size;
      const rows: Row[] = [];
      const extensionBytes = size('dist/extension.js');
      rows.push({
        bench: 'extension bundle (minified)',
        case: 'dist/extension.js',
        result: kb(extensionBytes),
        target: `< ${EXTENSION_TARGET_KB} KB`,
        verdict: below(extensionBytes / 1024, EXTENSION_TARGET_KB),
      });
      for (const file of ['dist/engine.js', 'dist/cli.js', 'dist/synth-worker.js', 'media/build/player.js']) {
        if (existsSync(path.join(work, file)))
          rows.push({ bench: 'bundle (minified)', case: file, result: kb(size(file)) });
      }
      rows.push({
        bench: 'package',
        case: 'dist/article-audio.vsix',
        result: kb(size('dist/article-audio.vsix')),
        note: 'most of it is flite.wasm (speech data)',
      });
      options.progress('extension: activation in VS Code (3 fresh windows)');
      rows.push(...(await activationRows(work)));
      return rows;
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
};

const ACTIVATIONS = 3;

/**
 * Opens the release build in a fresh VS Code (new profile each time), opens the Jobs view (which activates the
 * extension) and reads the time the extension logs for its activate(): its own work, not VS Code's loading of the
 * bundle. The median of three windows.
 */
async function activationRows(extensionPath: string): Promise<Row[]> {
  const { ensureTestEnvironment } = (await import('../scripts/test-env.mjs')) as { ensureTestEnvironment: () => void };
  ensureTestEnvironment();
  const { startVSCodeWeb } = await import('../test/support/vscode-web.mjs');
  const times: number[] = [];
  for (let round = 0; round < ACTIVATIONS; round++) {
    const vscode = await startVSCodeWeb({ extensionDevelopmentPath: extensionPath });
    try {
      await vscode.open();
      await vscode.page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
      const started = Date.now();
      let logged: number | undefined;
      while (logged === undefined) {
        if (Date.now() - started > 90_000) throw new Error('the extension did not log its activation within 90 s');
        await vscode.page.keyboard.press('F1');
        const input = vscode.page.locator('.quick-input-widget input');
        await input.fill('>Article Audio: Show Jobs');
        await vscode.page
          .locator('.quick-input-list .monaco-list-row', { hasText: 'Show Jobs' })
          .first()
          .waitFor({ timeout: 5_000 })
          .then(
            () => input.press('Enter'),
            () => vscode.page.keyboard.press('Escape'),
          );
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        logged = activationLogged(vscode.userDataDir);
      }
      times.push(logged);
    } finally {
      await vscode.close();
    }
  }
  const sorted = [...times].sort((a, b) => a - b);
  return [
    {
      bench: 'extension activation time',
      case: 'activate() of the release build, in VS Code',
      result: `${sorted[Math.floor(sorted.length / 2)]} ms (median of ${times.join(', ')} ms)`,
      note: 'as the extension logs it; the engine starts later, at the first job',
    },
  ];
}

/** The "activated in N ms" line of the extension's log under VS Code's user data folder, if written yet. */
function activationLogged(userDataDir: string): number | undefined {
  for (const file of filesUnder(path.join(userDataDir, 'logs'))) {
    if (!file.endsWith('.log')) continue;
    const match = /activated in (\d+) ms/.exec(readFileSync(file, 'utf8'));
    if (match) return Number(match[1]);
  }
  return undefined;
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}
