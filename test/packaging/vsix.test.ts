// `npm run package` writes a .vsix offline that installs into real VS Code. Runs in a copy of the repo, so the
// release build (which empties dist/) never disturbs suites that use this checkout's dist/ at the same time.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

const root = path.resolve(__dirname, '..', '..');
const skip = new Set(['node_modules', 'dist', 'out', '.git', 'test-results', '.vscode-test', '.bench']);

describe('Packaging', () => {
  let work: string;
  let vsix: string;
  let entries: string[];

  before(async () => {
    const { ensureTestEnvironment } = await import('../../scripts/test-env.mjs');
    ensureTestEnvironment(); // unzip, and code-server for the install test
    work = mkdtempSync(path.join(os.tmpdir(), 'article-audio-package-'));
    for (const name of readdirSync(root)) {
      if (skip.has(name)) continue;
      cpSync(path.join(root, name), path.join(work, name), { recursive: true });
    }
    symlinkSync(path.join(root, 'node_modules'), path.join(work, 'node_modules'), 'dir');
    execFileSync('npm', ['run', 'package', '--silent'], {
      cwd: work,
      stdio: 'pipe',
      env: { ...process.env, npm_config_loglevel: 'error' },
    });
    vsix = path.join(work, 'dist', 'article-audio.vsix');
    entries = execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8' }).split('\n').filter(Boolean);
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('writes a .vsix with the bundles, the voice data and the player page, and nothing else', () => {
    assert.ok(statSync(vsix).size > 1_000_000, 'the .vsix is suspiciously small');
    for (const needed of [
      'extension/package.json',
      'extension/readme.md',
      'extension/dist/extension.js',
      'extension/dist/engine.js',
      'extension/dist/synth-worker.js',
      'extension/dist/flite.wasm',
      'extension/dist/speex-resampler-nonsimd.wasm',
      'extension/dist/lame.wasm',
      'extension/media/build/player.js',
    ]) {
      assert.ok(entries.includes(needed), `${needed} is missing from the .vsix`);
    }
    // pdf.js's character maps (CJK PDFs), every one the build copied.
    const cMaps = readdirSync(path.join(work, 'dist', 'pdf-cmaps'));
    assert.ok(cMaps.length > 100, `${cMaps.length} character maps built`);
    for (const name of cMaps)
      assert.ok(
        entries.includes(`extension/dist/pdf-cmaps/${name}`),
        `dist/pdf-cmaps/${name} is missing from the .vsix`,
      );
    const bundles = readdirSync(path.join(work, 'dist')).filter((name) => name.endsWith('.js') && name !== 'cli.js');
    assert.ok(bundles.length >= 5, `only ${bundles.join(', ')} built`);
    for (const bundle of bundles)
      assert.ok(entries.includes(`extension/dist/${bundle}`), `dist/${bundle} is missing from the .vsix`);
    assert.ok(
      !entries.includes('extension/dist/cli.js'),
      'the command line is not packaged: the extension never loads it',
    );
    const unwanted = entries.filter((e) => /\.(map|ts)$|\/(src|test|node_modules|scripts|bench)\//.test(e));
    assert.deepEqual(unwanted, [], 'sources, tests or source maps were packaged');
  });

  it('shows users the extension page, the icon and the walkthrough, not the developer README', () => {
    for (const needed of [
      'extension/media/icon.png',
      'extension/media/walkthrough/convert.md',
      'extension/media/walkthrough/sample.md',
    ]) {
      assert.ok(entries.includes(needed), `${needed} is missing from the .vsix`);
    }
    const readme = execFileSync('unzip', ['-p', vsix, 'extension/readme.md'], { encoding: 'utf8' });
    assert.match(readme, /## Privacy/);
    assert.doesNotMatch(readme, /npm test|npm ci/, 'the extension page carries the developer README');
  });

  it('ships the full licence text of every bundled package, generated from node_modules', async () => {
    const notices = entries.find((e) => e.toLowerCase() === 'extension/third_party_notices.md');
    assert.ok(notices, 'THIRD_PARTY_NOTICES.md is missing from the .vsix');
    const shipped = execFileSync('unzip', ['-p', vsix, notices], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const { collectPackages, render } = await import('../../scripts/third-party-notices.mjs');
    const packages = collectPackages();
    for (const name of ['undici', 'zod', 'linkedom', 'node-id3', '@mozilla/readability', 'ipaddr.js', 'marked']) {
      assert.ok(
        packages.some((p) => p.name === name),
        `${name} is not among the bundled packages`,
      );
    }
    for (const p of packages) {
      assert.ok(shipped.includes(`## ${p.name} ${p.version}\n`), `${p.name} ${p.version} has no section`);
      for (const { text } of p.texts)
        assert.ok(shipped.includes(text.trimEnd()), `the licence text of ${p.name} is not complete`);
    }
    assert.match(shipped, /### LAME 3\.100 \(dist\/lame\.wasm\)\n\nLicence: LGPL-2\.0-or-later/);
    for (const lgpl of ['## LGPL-2\n', '## LGPL-2.1\n', '## GPL-3\n'])
      assert.ok(shipped.includes(lgpl), `${lgpl.trim()} text is missing`);
    assert.equal(
      shipped,
      render(packages),
      'THIRD_PARTY_NOTICES.md is out of date: run `node scripts/third-party-notices.mjs`',
    );
  });

  it('installs into real VS Code (code-server)', async () => {
    const { vscodeServerMain } = await import('../../scripts/test-env.mjs');
    const extensionsDir = path.join(work, 'installed-extensions');
    const serverDataDir = path.join(work, 'server-data');
    const server = vscodeServerMain();
    const common = [
      '--extensions-dir',
      extensionsDir,
      '--server-data-dir',
      serverDataDir,
      '--accept-server-license-terms',
    ];
    execFileSync(process.execPath, [server, '--install-extension', vsix, ...common], { stdio: 'pipe' });
    const listed = execFileSync(process.execPath, [server, '--list-extensions', '--show-versions', ...common], {
      encoding: 'utf8',
    });
    assert.match(listed, /article-audio\.article-audio@0\.1\.0/);
    assert.ok(existsSync(extensionsDir));
  });
});
