// Bundle sizes of the release build and the .vsix, made by `npm run package` in a copy of the repo (the release
// build empties dist/, which would disturb anyone using this checkout's dist/ meanwhile). Activation time needs a
// running VS Code and is not measured here.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
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
  run(options) {
    options.progress('extension: npm run package in a copy of the repo');
    const work = mkdtempSync(path.join(os.tmpdir(), 'article-audio-bench-package-'));
    try {
      for (const name of readdirSync(repoRoot)) {
        if (!SKIP.has(name)) cpSync(path.join(repoRoot, name), path.join(work, name), { recursive: true });
      }
      symlinkSync(path.join(repoRoot, 'node_modules'), path.join(work, 'node_modules'), 'dir');
      execFileSync('npm', ['run', 'package', '--silent'], { cwd: work, stdio: 'pipe', env: { ...process.env, npm_config_loglevel: 'error' } });
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
        if (existsSync(path.join(work, file))) rows.push({ bench: 'bundle (minified)', case: file, result: kb(size(file)) });
      }
      rows.push({ bench: 'package', case: 'dist/article-audio.vsix', result: kb(size('dist/article-audio.vsix')), note: 'most of it is flite.wasm (speech data)' });
      rows.push({
        bench: 'extension activation time',
        case: 'in VS Code',
        result: 'not measured here',
        note: 'needs a running VS Code (integration suite); loading the bundle in plain Node is not activation',
      });
      return Promise.resolve(rows);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
};
