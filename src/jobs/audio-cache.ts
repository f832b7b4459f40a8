// Finished jobs' files, downloaded into the extension's global storage (<globalStorage>/audio/<job id>/), so that
// playback never depends on a link that expires. Also keeps each job's input text, so that a failed job can be retried.
// It is what the user reads and hears, so it is theirs alone: folders 0700, files 0600, like the engine's token file.
import { createHash } from 'node:crypto';
import { access, chmod, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { OutputFile } from '../api/index';
import type { CachedJobFiles } from './types';

type FileRole = keyof CachedJobFiles;

const NAMES: Record<FileRole, string> = {
  audio: 'audio.mp3',
  transcript: 'transcript.vtt',
  chapters: 'chapters.json',
  article: 'article.md',
};
const INPUT = 'input.txt';

export class AudioCache {
  constructor(readonly root: string) {}

  /** The job's folder; ids that are not plain file names (a remote service may use anything) are hashed. */
  dir(jobId: string): string {
    const safe = /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/.test(jobId)
      ? jobId
      : createHash('sha256').update(jobId).digest('hex').slice(0, 32);
    return path.join(this.root, safe);
  }

  /**
   * Which of the job's outputs to keep, and where: by content type, else by the address's extension, else the first
   * output is taken as the audio (the spec names only audio).
   */
  plan(jobId: string, outputs: readonly OutputFile[]): { role: FileRole; output: OutputFile; path: string }[] {
    const planned = new Map<FileRole, OutputFile>();
    outputs.forEach((output, index) => {
      const role = roleOf(output) ?? (index === 0 ? 'audio' : undefined);
      if (role && !planned.has(role)) planned.set(role, output);
    });
    return [...planned].map(([role, output]) => ({ role, output, path: path.join(this.dir(jobId), NAMES[role]) }));
  }

  async prepare(jobId: string): Promise<void> {
    await mkdir(this.dir(jobId), { recursive: true, mode: 0o700 });
  }

  async saveInput(jobId: string, text: string): Promise<void> {
    await this.prepare(jobId);
    await writeFile(path.join(this.dir(jobId), INPUT), text, { encoding: 'utf8', mode: 0o600 });
  }

  /** Makes the job's downloaded files readable by this user only. */
  async restrict(jobId: string): Promise<void> {
    await restrictTree(this.dir(jobId));
  }

  /** Takes group and other permissions away from everything in the cache (made by versions before this rule). */
  async tighten(): Promise<void> {
    await restrictTree(this.root);
  }

  async readInput(jobId: string): Promise<string | undefined> {
    try {
      return await readFile(path.join(this.dir(jobId), INPUT), 'utf8');
    } catch {
      return undefined;
    }
  }

  /** Whether the job's audio is still on disk. */
  async hasAudio(files: CachedJobFiles | undefined): Promise<boolean> {
    if (!files) return false;
    try {
      await access(files.audio);
      return true;
    } catch {
      return false;
    }
  }

  async remove(jobId: string): Promise<void> {
    await rm(this.dir(jobId), { recursive: true, force: true });
  }
}

/** Removes group and other permissions (never adds any) from a folder and what it holds; best effort. */
async function restrictTree(target: string): Promise<void> {
  try {
    const info = await stat(target);
    if ((info.mode & 0o077) !== 0) await chmod(target, info.mode & 0o700);
    if (!info.isDirectory()) return;
    for (const entry of await readdir(target)) await restrictTree(path.join(target, entry));
  } catch {
    // Gone meanwhile, or not ours: nothing to tighten.
  }
}

function roleOf(output: OutputFile): FileRole | undefined {
  const type = output.contentType?.split(';')[0]?.trim().toLowerCase();
  if (type === 'audio/mpeg' || type === 'audio/mp3') return 'audio';
  if (type === 'text/vtt') return 'transcript';
  if (type === 'application/json') return 'chapters';
  if (type === 'text/markdown') return 'article';
  let pathname = '';
  try {
    pathname = new URL(output.url).pathname.toLowerCase();
  } catch {
    return undefined;
  }
  if (pathname.endsWith('.mp3')) return 'audio';
  if (pathname.endsWith('.vtt')) return 'transcript';
  if (pathname.endsWith('.json')) return 'chapters';
  if (pathname.endsWith('.md')) return 'article';
  return undefined;
}
