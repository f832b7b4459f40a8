// The extension's audio cache holds what a person reads and hears: readable by them only (folders 0700, files 0600),
// including what an older version left world-readable, on a real folder.
import * as assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AudioCache } from '../../../src/jobs/audio-cache';

function modes(root: string): string[] {
  const out: string[] = [];
  const walk = (target: string) => {
    const info = statSync(target);
    out.push(`${path.relative(root, target) || '.'} ${(info.mode & 0o777).toString(8)}`);
    if (info.isDirectory()) for (const entry of readdirSync(target)) walk(path.join(target, entry));
  };
  walk(root);
  return out;
}

describe('jobs: the audio cache is private', { skip: process.platform === 'win32' ? 'POSIX modes' : false }, () => {
  let parent: string;
  before(() => {
    parent = mkdtempSync(path.join(os.tmpdir(), 'aa-cache-'));
  });
  after(() => rmSync(parent, { recursive: true, force: true }));

  it('makes new folders 0700 and files 0600', async () => {
    const cache = new AudioCache(path.join(parent, 'fresh', 'audio'));
    await cache.saveInput('job1', 'The text the user converted.');
    writeFileSync(path.join(cache.dir('job1'), 'audio.mp3'), 'mp3');
    await cache.restrict('job1');
    const open = modes(cache.root).filter((line) => !/ (700|600)$/.test(line));
    assert.deepEqual(open, []);
  });

  it('tightens a cache an older version left readable by everyone, without adding permissions', async () => {
    const root = path.join(parent, 'old', 'audio');
    mkdirSync(path.join(root, 'job2'), { recursive: true });
    writeFileSync(path.join(root, 'job2', 'audio.mp3'), 'mp3');
    writeFileSync(path.join(root, 'job2', 'article.md'), '# Title');
    chmodSync(path.join(root, 'job2', 'article.md'), 0o444);
    for (const dir of [root, path.join(root, 'job2')]) chmodSync(dir, 0o755);
    chmodSync(path.join(root, 'job2', 'audio.mp3'), 0o644);
    await new AudioCache(root).tighten();
    assert.deepEqual(modes(root).sort(), ['. 700', 'job2 700', 'job2/article.md 400', 'job2/audio.mp3 600']);
  });
});
