// The player page's CPU in real VS Code (the test VS Code: code-server in headless Chromium), for a long article: while
// it converts with the player open (each part adds its sentences to the transcript), while it plays and still
// converts, and while it plays once converted (the spoken word followed alone). Chromium's CPU is read from /proc for
// this benchmark's browser only (the browser process carries its marker in its environment; the rest are found below
// it), so a test run beside it is not counted; its share of the machine still slows the page.
//
// With BENCH_BASE_PLAYER=<another build's media/build/player.js> that player runs too, in a copy of this extension
// whose media/build holds it, alternated round by round with this checkout's, and each row gives the ratio:
//   git worktree add /tmp/base <commit> && (cd /tmp/base && npm ci && node esbuild.mjs)
//   BENCH_BASE_PLAYER=/tmp/base/media/build/player.js npm run bench -- player
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchVSCode, repoRoot, waitFor } from '../test/support/vscode-ui';
import { cpuSeconds, statFields } from './lib/engine-runs';
import { type Bench, type Row } from './lib/report';

const ROUNDS = 2;
const CONVERTING_MS = 20_000;
const PLAYING_MS = 15_000;
const load = () => os.loadavg()[0]!.toFixed(1);

/**
 * CPU seconds of this benchmark's Chromium, by process type: the browser processes whose environment holds `marker`,
 * and every process below them (renderers are forked by the zygote, and rewrite their own command line and
 * environment, so they are found by parent, not by marker).
 */
function chromiumCpuS(marker: string): Map<string, number> {
  const processes = new Map<number, { parent: number; type: string; cpuS: number; ours: boolean }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'latin1');
      const fields = statFields(Number(entry));
      const chromium = /chrom/i.test(command.split('\0')[0]!);
      processes.set(Number(entry), {
        parent: Number(fields[1]),
        type: chromium ? (/--type=([a-z-]+)/.exec(command)?.[1] ?? 'browser') : 'other',
        cpuS: cpuSeconds(fields),
        ours: chromium && readFileSync(`/proc/${entry}/environ`, 'latin1').includes(marker),
      });
    } catch {
      // ended meanwhile, or not ours to read
    }
  }
  const isOurs = (pid: number, depth = 0): boolean => {
    const entry = processes.get(pid);
    if (!entry || depth > 10) return false;
    return (entry.ours && entry.type === 'browser') || isOurs(entry.parent, depth + 1);
  };
  const byType = new Map<string, number>();
  for (const [pid, entry] of processes)
    if (entry.type !== 'other' && isOurs(pid)) byType.set(entry.type, (byType.get(entry.type) ?? 0) + entry.cpuS);
  return byType;
}

/** Percent of one core that the browser's renderers and all its processes used over `ms`. */
async function cpuOver(marker: string, ms: number): Promise<{ renderer: number; all: number }> {
  const before = chromiumCpuS(marker);
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = chromiumCpuS(marker);
  let all = 0;
  for (const [type, seconds] of after) all += seconds - (before.get(type) ?? 0);
  const renderer = (after.get('renderer') ?? 0) - (before.get('renderer') ?? 0);
  return { renderer: (renderer / (ms / 1000)) * 100, all: (all / (ms / 1000)) * 100 };
}

/**
 * A copy of this extension's folder whose player is `playerJs`: media/ and dist/ copied (VS Code names the extension
 * of a log channel by where its code runs from, and a linked dist/ runs from this checkout), the rest linked.
 */
function extensionWithPlayer(playerJs: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-bench-player-'));
  for (const name of readdirSync(repoRoot)) {
    if (name === 'media' || name === 'dist')
      cpSync(path.join(repoRoot, name), path.join(dir, name), { recursive: true });
    else symlinkSync(path.join(repoRoot, name), path.join(dir, name));
  }
  cpSync(playerJs, path.join(dir, 'media', 'build', 'player.js'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

async function measure(extensionPath: string | undefined, article: string, title: string) {
  // Inherited by the browser that launchVSCode starts (and by VS Code's server and the engine, which chromiumCpuS
  // leaves out: not Chromium).
  process.env.AA_BENCH_PLAYER = randomBytes(6).toString('hex');
  const marker = `AA_BENCH_PLAYER=${process.env.AA_BENCH_PLAYER}`;
  const vscode = await launchVSCode({
    files: { 'article.md': article },
    settings: { 'articleAudio.model': 'article-audio-1-mini', 'articleAudio.openPlayerWhenDone': true },
    ...(extensionPath ? { extensionPath } : {}),
  });
  try {
    await vscode.openFile('article.md', title.slice(0, 20));
    await vscode.convertCurrentDocument(title);
    const frame = await vscode.webviewFrame('Article Audio Player', 120_000);
    await frame.locator('#player').waitFor({ state: 'visible', timeout: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const stillConverting = () => frame.locator('#transcript-note', { hasText: 'Still converting' }).count();
    const converting = await cpuOver(marker, CONVERTING_MS);
    const convertingAfter = (await stillConverting()) > 0;
    await frame.locator('#play').click({ timeout: 30_000 });
    await waitFor('playback', async () => (await frame.locator('#play').getAttribute('aria-label')) === 'Pause');
    const playing = await cpuOver(marker, PLAYING_MS);
    const playingAfter = (await stillConverting()) > 0;
    // Then the finished file's word following alone (the job ends while it plays, and the page takes its transcript).
    await waitFor('the job to finish', async () => (await stillConverting()) === 0, 300_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const finished = await cpuOver(marker, PLAYING_MS);
    return { converting, playing, finished, endedWithin: { converting: !convertingAfter, playing: !playingAfter } };
  } finally {
    await vscode.close();
    delete process.env.AA_BENCH_PLAYER;
  }
}

export const player: Bench = {
  name: 'player',
  title: 'Player page: CPU while a long article converts and while it plays (real VS Code, headless Chromium)',
  async run(options) {
    const { ensureTestEnvironment } = (await import('../scripts/test-env.mjs')) as {
      ensureTestEnvironment: () => void;
    };
    ensureTestEnvironment();
    const article = readFileSync(path.join(repoRoot, 'test/fixtures/articles/long.md'), 'utf8');
    const title = article
      .split('\n')[0]!
      .replace(/^#+\s*/, '')
      .trim();
    const basePlayer = process.env.BENCH_BASE_PLAYER;
    const base = basePlayer ? extensionWithPlayer(path.resolve(basePlayer)) : undefined;
    const builds = [{ name: 'this checkout', path: undefined as string | undefined }];
    if (base) builds.push({ name: `base (${basePlayer})`, path: base.dir });
    const phases = ['converting', 'playing', 'finished'] as const;
    const totals = builds.map(() => ({
      renderer: { converting: 0, playing: 0, finished: 0 },
      all: { converting: 0, playing: 0, finished: 0 },
      endedWithin: { converting: 0, playing: 0 },
    }));
    const loadBefore = load();
    try {
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, build] of builds.entries()) {
          options.progress(`player: ${build.name}, round ${round + 1} of ${ROUNDS}`);
          const result = await measure(build.path, article, title);
          const total = totals[i]!;
          for (const phase of phases) {
            total.renderer[phase] += result[phase].renderer / ROUNDS;
            total.all[phase] += result[phase].all / ROUNDS;
          }
          if (result.endedWithin.converting) total.endedWithin.converting++;
          if (result.endedWithin.playing) total.endedWithin.playing++;
        }
      }
    } finally {
      base?.remove();
    }
    const note = `${ROUNDS} rounds${builds.length > 1 ? ', builds alternated' : ''}; load ${loadBefore} -> ${load()}`;
    const rows: Row[] = [];
    const titles = {
      converting: 'player page CPU, long article (99 KB) converting, player open and paused',
      playing: 'player page CPU, the same article playing (word by word) while it still converts',
      finished: 'player page CPU, the same article playing (word by word) once converted',
    };
    for (const phase of phases) {
      for (const [i, build] of builds.entries()) {
        const t = totals[i]!;
        const base = totals[1];
        const ratio =
          i === 0 && base
            ? `${(t.renderer[phase] / base.renderer[phase]).toFixed(2)}x the base player's renderer CPU; `
            : '';
        const window =
          phase === 'converting'
            ? `${CONVERTING_MS / 1000} s from 2 s after the player showed`
            : `${PLAYING_MS / 1000} s`;
        const ended = phase === 'finished' ? 0 : t.endedWithin[phase];
        const partial = ended ? `; in ${ended} round(s) the job finished within the window` : '';
        rows.push({
          bench: titles[phase],
          case: build.name,
          result: `renderer ${t.renderer[phase].toFixed(0)} %, all of Chromium ${t.all[phase].toFixed(0)} % of a core`,
          note: `${ratio}${window}${partial}; ${note}`,
        });
      }
    }
    return rows;
  },
};
