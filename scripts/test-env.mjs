// Installs what the VS Code and browser tests need, once, and caches it:
// - Debian packages: chromium (the browser Playwright drives), ripgrep and libkrb5-dev (code-server's install needs them),
//   unzip (the packaging test lists the .vsix);
// - code-server (VS Code's server and web client, from the npm registry) in a cache folder outside the repo.
// Desktop VS Code cannot be downloaded offline; see ARCHITECTURE.md, "Tests".
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync, copyFileSync, rmSync, renameSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const CODE_SERVER_VERSION = '4.100.3';
const RIPGREP_CACHE_NAME = 'vscode-ripgrep-cache-1.15.11';
const RIPGREP_TARBALL = 'ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz';

export function cacheRoot() {
  const base =
    process.env.ARTICLE_AUDIO_TEST_CACHE ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'article-audio-test');
  mkdirSync(base, { recursive: true });
  return base;
}

export function codeServerDir() {
  return path.join(cacheRoot(), `code-server-${CODE_SERVER_VERSION}`);
}

/** The script that starts VS Code's server (reh-web) inside code-server. */
export function vscodeServerMain() {
  return path.join(codeServerDir(), 'node_modules', 'code-server', 'lib', 'vscode', 'out', 'server-main.js');
}

export function chromiumPath() {
  return process.env.ARTICLE_AUDIO_CHROMIUM ?? '/usr/bin/chromium';
}

function log(message) {
  console.log(`[test-env] ${message}`);
}

function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function debianPackageInstalled(name) {
  return spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' }).stdout?.includes(
    'install ok installed',
  );
}

/** Installs missing packages only when asked (`install`: CI, or `npm test -- --install`); else says what to run. */
/** Installing Debian packages (apt-get) is asked for: in CI, or by `npm test -- --install` (which sets the variable). */
export function installAllowed() {
  return process.env.CI === 'true' || process.env.ARTICLE_AUDIO_TEST_INSTALL === '1';
}

function ensureDebianPackages(install) {
  const wanted = ['chromium', 'ripgrep', 'libkrb5-dev', 'unzip'];
  const missing = wanted.filter((name) => !debianPackageInstalled(name));
  if (missing.length === 0) return;
  if (!install || process.getuid?.() !== 0) {
    throw new Error(
      `Missing Debian packages for the VS Code and browser tests: ${missing.join(', ')}. Install them with ` +
        `\`sudo apt-get install -y ${missing.join(' ')}\`${process.getuid?.() === 0 ? ', or run `npm test -- --install`' : ''}.`,
    );
  }
  log(`installing Debian packages: ${missing.join(', ')} (once)`);
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/** @vscode/ripgrep's postinstall downloads rg; seed its cache with Debian's binary so nothing is downloaded. */
function seedRipgrepCache() {
  const dir = path.join(process.env.TMPDIR ?? os.tmpdir(), RIPGREP_CACHE_NAME);
  const tarball = path.join(dir, RIPGREP_TARBALL);
  if (existsSync(tarball)) return;
  const staging = path.join(dir, 'staging');
  mkdirSync(staging, { recursive: true });
  copyFileSync('/usr/bin/rg', path.join(staging, 'rg'));
  execFileSync('tar', ['-czf', tarball, '-C', staging, 'rg']);
  rmSync(staging, { recursive: true, force: true });
}

function ensureCodeServer() {
  if (existsSync(vscodeServerMain())) return;
  seedRipgrepCache();
  // Install into a staging folder and rename, so an interrupted install is never mistaken for a cached one.
  const target = codeServerDir();
  const staging = `${target}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  writeFileSync(path.join(staging, 'package.json'), JSON.stringify({ name: 'code-server-cache', private: true }));
  log(`installing code-server ${CODE_SERVER_VERSION} into ${target} (once, about 90 s)`);
  const started = Date.now();
  execFileSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', `code-server@${CODE_SERVER_VERSION}`],
    {
      cwd: staging,
      stdio: 'inherit',
      // node-pty's postinstall runs `npx node-gyp`; a user config with `yes = false` would cancel it.
      env: { ...process.env, npm_config_unsafe_perm: 'true', npm_config_yes: 'true' },
    },
  );
  rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  log(`code-server installed in ${Math.round((Date.now() - started) / 1000)} s`);
}

/** Debian's Postgres server for the team service's tests (test/team/postgres.ts runs initdb in a temp folder). */
export function ensurePostgres({ install = installAllowed() } = {}) {
  if (
    debianPackageInstalled('postgresql') ||
    spawnSync('sh', ['-c', 'ls /usr/lib/postgresql/*/bin/initdb'], { stdio: 'ignore' }).status === 0
  )
    return;
  if (!install || process.getuid?.() !== 0) {
    throw new Error(
      `The team tests need a Postgres server: \`sudo apt-get install -y postgresql\`${process.getuid?.() === 0 ? ', or run `npm test -- --install`' : ''}.`,
    );
  }
  log('installing Debian package postgresql (once)');
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'postgresql'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

export function ensureTestEnvironment({ install = installAllowed() } = {}) {
  if (!has('rg') || !has('unzip') || !existsSync(chromiumPath()) || !debianPackageInstalled('libkrb5-dev'))
    ensureDebianPackages(install);
  ensureCodeServer();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureTestEnvironment({ install: process.argv.includes('--install') || installAllowed() });
  log(`ready: ${vscodeServerMain()}`);
}
