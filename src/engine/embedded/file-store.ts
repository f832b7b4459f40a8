// The engine's own JobStore: plain files in the data dir, no database. Embedded databases that persist
// incrementally in pure JavaScript are scarce (node:sqlite needs Node 22, better-sqlite3/LevelDB/LMDB are native
// modules, which VS Code's Electron cannot load from a universal .vsix), and a job is a natural file-sized unit: one
// small record replaced atomically on each state change, one append-only event log, and its output files.
//
//   <data dir>/engine.lock                  who owns the dir (see data-dir-lock.ts)
//   <data dir>/jobs/<id>/job.json           the record; its presence marks a fully created job
//   <data dir>/jobs/<id>/events.ndjson      the stream history, one event per line
//   <data dir>/jobs/<id>/run/               the pipeline's work folder for the current run
//   <data dir>/jobs/<id>/outputs/           the output files of a succeeded job
//   <data dir>/trash/                       jobs being deleted (renamed here first, so none is ever half there)
//
// Everything is readable by its owner only (folders 0700, files 0600, like the token file): it is what a person reads.
// Folders and files made by older versions are tightened when the store opens.
//
// Crash rules: a record is written with temp file + fsync + rename + folder fsync, so it is old or new, never torn.
// Events are appended with one write per batch; a crash can leave a torn last line, which open() cuts off. Stale
// temp files and folders of jobs whose creation never finished are removed on open.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, type FileHandle, lstat, mkdir, open, readFile, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import * as z from 'zod';
import { MODEL_IDS } from '../../protocol';
import { isJobId } from '../core/job-id';
import type { PipelineOutputFile } from '../../speech/types';
import { TEMP_SUFFIX, renameWithRetry, syncDirectory, writeFileAtomic } from './atomic-file';
import { type DataDirLock, type LockOptions, lockDataDir } from './data-dir-lock';
import type {
  ByteRange,
  JobStore,
  LoadedJob,
  OutputStorage,
  StoredEvent,
  StoredJob,
  StoredOutput,
} from '../core/job-store';

const RECORD = 'job.json';
const EVENTS = 'events.ndjson';
const RUN = 'run';
/** A run's own folder (`run-<random>`), or the one folder all runs shared before (`run`). */
const RUN_DIR = /^run(-[0-9a-f]{12})?$/;
/** How old the last read of the lock may be before a progress or log line reads it again (fenceFrequent). */
const FENCE_READ_MS = 250;
const OUTPUTS = 'outputs';
/** Output file names a pipeline may use: plain names, nothing that could climb out of the job's folder. */
export const OUTPUT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export interface FileJobStoreOptions {
  dataDir: string;
  lock?: Partial<LockOptions>;
  log?: (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;
}

const outputSchema = z.object({
  name: z.string().regex(OUTPUT_NAME),
  contentType: z.string(),
  durationS: z.number().optional(),
  bytes: z.number().int().nonnegative(),
  etag: z.string(),
});

/** Checks records read back from disk; unknown fields are dropped, a record that does not fit is skipped. */
const recordSchema = z.object({
  id: z.string().refine(isJobId),
  owner: z.string().regex(/^[0-9a-f]{64}$/),
  request: z.object({
    model_id: z.enum(MODEL_IDS),
    url: z.string().optional(),
    text: z.string().optional(),
    intro_audio_url: z.string().optional(),
    outro_audio_url: z.string().optional(),
  }),
  idempotency: z.object({ key: z.string(), request: z.string() }).optional(),
  status: z.enum(['queued', 'processing', 'succeeded', 'failed']),
  progress: z.number().min(0).max(1),
  createdAt: z.string(),
  updatedAt: z.string(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  attempts: z.number().int().nonnegative(),
  crashes: z.number().int().nonnegative(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  outputs: z.array(outputSchema).nullable(),
  result: z
    .object({
      title: z.string().optional(),
      durationS: z.number(),
      language: z.string().optional(),
      styleId: z.number(),
      requestDurationS: z.number(),
    })
    .nullable(),
  parts: z.array(outputSchema).optional(),
});

const eventSchema = z.object({
  id: z.number().int().positive(),
  event: z.enum(['status', 'log', 'result', 'end']),
  data: z.unknown(),
});

export class FileJobStore implements JobStore, OutputStorage {
  private readonly jobsDir: string;
  private readonly trashDir: string;
  private lock: DataDirLock | undefined;
  /** Set when another engine took the data dir (ours was deleted under us): from then on this store writes nothing. */
  private lostTo: string | undefined;
  /** When the lock file was last read and found ours (Date.now). */
  private lockReadAt = 0;
  /** Jobs whose last append failed part-way: the next append starts on a fresh line. */
  private readonly tornLogs = new Set<string>();
  /**
   * The event logs of running jobs, kept open: an append is then one write, not open, write and close, each a trip
   * through libuv's thread pool, where a loaded machine queues them behind the fsyncs of parts and records (measured
   * at load 17: p99 129 ms against 26 ms). Every follower waits for that append before it gets the event. Closed
   * with a job's last (durable) events, before it is removed, and when the store closes.
   */
  private readonly eventLogs = new Map<string, Promise<FileHandle>>();
  private readonly log: NonNullable<FileJobStoreOptions['log']>;

  constructor(private readonly options: FileJobStoreOptions) {
    this.jobsDir = path.join(options.dataDir, 'jobs');
    this.trashDir = path.join(options.dataDir, 'trash');
    this.log = options.log ?? (() => undefined);
  }

  async open(): Promise<LoadedJob[]> {
    await mkdir(this.jobsDir, { recursive: true, mode: PRIVATE_DIR });
    await Promise.all([this.options.dataDir, this.jobsDir].map((dir) => restrict(dir)));
    const onLost = (message: string) => {
      if (this.lostTo !== undefined) return;
      this.lostTo = message;
      this.log('error', `${message} It starts no job and writes nothing more; restart it (or stop the other engine).`);
    };
    this.lock = await lockDataDir(this.options.dataDir, {
      waitMs: 10_000,
      staleMs: 8_000,
      onLost,
      ...this.options.lock,
    });
    await rm(this.trashDir, { recursive: true, force: true });
    await mkdir(this.trashDir, { recursive: true, mode: PRIVATE_DIR });
    const names = (await readdir(this.jobsDir)).filter((name) => {
      if (isJobId(name)) return true;
      this.log('warn', `Ignoring ${path.join(this.jobsDir, name)}: not a job folder.`);
      return false;
    });
    const loaded: LoadedJob[] = [];
    // A bounded number of jobs at a time: thousands of jobs must not exhaust file handles.
    for (let i = 0; i < names.length; i += 32) {
      const batch = await Promise.all(names.slice(i, i + 32).map((name) => this.load(name)));
      for (const job of batch) if (job) loaded.push(job);
    }
    return loaded;
  }

  private async load(id: string): Promise<LoadedJob | undefined> {
    const dir = this.jobDir(id);
    try {
      await tighten(dir);
      for (const entry of await readdir(dir)) {
        if (entry.endsWith(TEMP_SUFFIX)) await rm(path.join(dir, entry), { force: true });
      }
      let text: string;
      try {
        text = await readFile(path.join(dir, RECORD), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        // Created but never acknowledged (the crash came before the record was in place): not a job.
        await this.remove(id);
        return undefined;
      }
      const parsed = recordSchema.safeParse(JSON.parse(text));
      if (!parsed.success || parsed.data.id !== id) {
        this.log('error', `Skipping job ${id}: its record does not have the expected shape.`);
        return undefined;
      }
      return { job: parsed.data, lastEvent: await this.lastEvent(id) };
    } catch (error) {
      this.log('error', `Skipping job ${id}: ${(error as Error).message}`);
      return undefined;
    }
  }

  /** Refuses every write once another engine owns the data dir: its jobs are its own to run (never twice). */
  private assertOwner(): void {
    if (this.lostTo !== undefined) throw Object.assign(new Error(this.lostTo), { code: 'EDATADIRLOST' });
  }

  /**
   * assertOwner, with the lock file read now, before a write that decides a job's run: its record, the events that
   * end it, its output files, a new run's folder. An engine frozen while another took its data dir over (a suspended
   * laptop, a stopped VM) runs on when it wakes, before its heartbeat's next beat: its run then failed on the folder
   * the other engine had removed, and wrote the job `failed` (ENOENT) while the other engine was running it; or it
   * removed the other engine's live run folder.
   */
  private async fence(): Promise<void> {
    this.assertOwner();
    const now = Date.now();
    if (this.lock && !(await this.lock.stillHeld())) this.assertOwner();
    this.lockReadAt = now;
  }

  /**
   * The fence for progress and log lines, which come many a second: the lock file is read when the last read is
   * older than FENCE_READ_MS, so a frozen run that wakes writes none of them either (the wall clock, unlike the
   * monotonic one, runs on while a machine is suspended), and the hot path reads the lock a few times a second.
   */
  private async fenceFrequent(): Promise<void> {
    const now = Date.now();
    if (Math.abs(now - this.lockReadAt) > FENCE_READ_MS) await this.fence();
    else this.assertOwner();
  }

  async create(job: StoredJob, events: StoredEvent[]): Promise<void> {
    this.assertOwner();
    const dir = this.jobDir(job.id);
    try {
      await mkdir(dir, { mode: PRIVATE_DIR });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // The data dir was deleted under the running engine (a cleanup script, a user): make it again rather than fail
      // every submission. The lock's heartbeat puts the lock file back; jobs that were in it are gone.
      this.log(
        'warn',
        `The data dir ${this.options.dataDir} was deleted while the engine ran; making it again. Jobs that were in it are lost.`,
      );
      await mkdir(this.jobsDir, { recursive: true, mode: PRIVATE_DIR });
      await mkdir(this.trashDir, { recursive: true, mode: PRIVATE_DIR });
      await mkdir(dir, { mode: PRIVATE_DIR });
    }
    const handle = await open(path.join(dir, EVENTS), 'wx', 0o600);
    try {
      await handle.writeFile(events.map(eventLine).join(''));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await writeFileAtomic(path.join(dir, RECORD), JSON.stringify(job));
    await syncDirectory(this.jobsDir);
  }

  async save(job: StoredJob): Promise<void> {
    await this.fence();
    await writeFileAtomic(path.join(this.jobDir(job.id), RECORD), JSON.stringify(job));
  }

  async appendEvents(jobId: string, events: readonly StoredEvent[], durable: boolean): Promise<void> {
    if (durable) await this.fence();
    else await this.fenceFrequent();
    if (events.length === 0) return;
    const lead = this.tornLogs.has(jobId) ? '\n' : '';
    let opened = this.eventLogs.get(jobId);
    if (!opened) {
      opened = open(path.join(this.jobDir(jobId), EVENTS), 'a', 0o600);
      this.eventLogs.set(jobId, opened);
    }
    try {
      const handle = await opened;
      this.tornLogs.add(jobId);
      await handle.writeFile(lead + events.map(eventLine).join(''));
      this.tornLogs.delete(jobId);
      if (durable) await handle.datasync();
    } catch (error) {
      await this.closeEventLog(jobId);
      throw error;
    }
    // The events that end a job are the durable ones: its log is complete.
    if (durable) await this.closeEventLog(jobId);
  }

  private async closeEventLog(jobId: string): Promise<void> {
    const opened = this.eventLogs.get(jobId);
    if (!opened) return;
    this.eventLogs.delete(jobId);
    await opened.then(
      (handle) => handle.close(),
      () => undefined,
    );
  }

  async readEvents(jobId: string): Promise<StoredEvent[]> {
    let text: string;
    try {
      text = await readFile(path.join(this.jobDir(jobId), EVENTS), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const events: StoredEvent[] = [];
    const complete = text.slice(0, text.lastIndexOf('\n') + 1);
    for (const line of complete.split('\n')) {
      const event = parseEventLine(line);
      if (event) events.push(event);
    }
    return events;
  }

  /**
   * The last intact event, reading only the end of the log. A torn last line (the process died while appending) is
   * cut off here, so that later appends start on a clean line.
   */
  private async lastEvent(jobId: string): Promise<StoredEvent | undefined> {
    let handle;
    try {
      handle = await open(path.join(this.jobDir(jobId), EVENTS), 'r+');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      let size = (await handle.stat()).size;
      for (let window = 16 * 1024; size > 0; window *= 4) {
        const start = Math.max(0, size - window);
        const buffer = Buffer.alloc(size - start);
        await handle.read(buffer, 0, buffer.length, start);
        const lastNewline = buffer.lastIndexOf(0x0a);
        if (lastNewline !== buffer.length - 1) {
          if (lastNewline === -1 && start > 0) continue;
          size = start + lastNewline + 1;
          await handle.truncate(size);
          this.log('warn', `Job ${jobId}: cut off a torn event at the end of its history.`);
          continue;
        }
        const previousNewline = buffer.lastIndexOf(0x0a, buffer.length - 2);
        if (previousNewline === -1 && start > 0) continue;
        const event = parseEventLine(buffer.subarray(previousNewline + 1, buffer.length - 1).toString('utf8'));
        if (event) return event;
        break;
      }
    } finally {
      await handle.close();
    }
    // The last line is damaged in the middle of the file's life (a disk error): fall back to a full read.
    return (await this.readEvents(jobId)).at(-1);
  }

  async prepareRun(jobId: string): Promise<string> {
    await this.fence();
    const jobDir = this.jobDir(jobId);
    // Folders of earlier runs go, as far as they can: one may still be written by the run that made it (an engine
    // frozen while another took the data dir over, continued before it noticed), so their removal may fail, and
    // this run never shares a folder with another (a shared one lost its files, or failed ENOTEMPTY, under the
    // other run's writes). What is left goes at the next run, or with the job.
    const earlier = (await readdir(jobDir).catch(() => [] as string[])).filter((name) => RUN_DIR.test(name));
    await Promise.all(
      earlier.map((name) => rm(path.join(jobDir, name), { recursive: true, force: true }).catch(() => undefined)),
    );
    // Parts an earlier run announced stay: clients may be playing them, and the new run makes the same ones again.
    // Files no record names are never served, and go with the job when it expires.
    const dir = path.join(jobDir, `${RUN}-${randomBytes(6).toString('hex')}`);
    await mkdir(dir, { mode: PRIVATE_DIR });
    return dir;
  }

  async commitOutputs(jobId: string, runDir: string, files: readonly PipelineOutputFile[]): Promise<StoredOutput[]> {
    const names = new Set<string>();
    for (const file of files) {
      if (!OUTPUT_NAME.test(file.name) || names.has(file.name))
        throw new Error(`The pipeline named an output file "${file.name}", which is not a plain, unique file name.`);
      names.add(file.name);
    }
    const outputs: StoredOutput[] = [];
    for (const file of files) {
      outputs.push(
        await this.put(jobId, file.name, path.join(runDir, file.name), {
          contentType: file.contentType,
          ...(file.durationS !== undefined ? { durationS: file.durationS } : {}),
        }),
      );
    }
    await rm(runDir, { recursive: true, force: true });
    return outputs;
  }

  /**
   * Publishes one file of a run (a finished output, or a part while the job still runs): flushed, then renamed
   * into the job's outputs folder, so a reader sees it whole or not at all.
   */
  async put(
    jobId: string,
    name: string,
    file: string,
    meta: { contentType: string; durationS?: number },
  ): Promise<StoredOutput> {
    this.assertOwner();
    if (!OUTPUT_NAME.test(name)) throw new Error(`"${name}" is not a plain output file name.`);
    const info = await lstat(file);
    if (!info.isFile()) throw new Error(`The pipeline's output ${name} is not a regular file.`);
    await restrict(file);
    const etag = await hashAndSync(file);
    const jobDir = this.jobDir(jobId);
    const outputsDir = path.join(jobDir, OUTPUTS);
    await mkdir(outputsDir, { recursive: true, mode: PRIVATE_DIR });
    await this.fence();
    await renameWithRetry(file, path.join(outputsDir, name));
    await syncDirectory(outputsDir);
    return {
      name,
      contentType: meta.contentType,
      ...(meta.durationS !== undefined ? { durationS: meta.durationS } : {}),
      bytes: info.size,
      etag,
    };
  }

  read(jobId: string, output: StoredOutput, range?: ByteRange): Readable {
    return this.readOutput(jobId, output.name, range);
  }

  readOutput(jobId: string, name: string, range?: ByteRange): Readable {
    if (!isJobId(jobId) || !OUTPUT_NAME.test(name)) throw new Error('Not an output of a job.');
    return createReadStream(
      path.join(this.jobDir(jobId), OUTPUTS, name),
      range ? { start: range.start, end: range.end } : {},
    );
  }

  async remove(jobId: string): Promise<void> {
    const aside = path.join(this.trashDir, `${jobId}.${randomBytes(4).toString('hex')}`);
    await mkdir(this.trashDir, { recursive: true, mode: PRIVATE_DIR });
    await this.closeEventLog(jobId);
    try {
      await renameWithRetry(this.jobDir(jobId), aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    this.tornLogs.delete(jobId);
    await rm(aside, { recursive: true, force: true });
  }

  /**
   * `/readyz`: the data-dir lock is still this engine's (no other engine took it over), and the data dir takes a
   * write (a small file written, flushed and removed: a full disk, a read-only remount or lost permissions show).
   */
  readinessChecks(): Record<string, () => Promise<{ ok: boolean; error?: string }>> {
    return {
      data_dir_lock: () =>
        Promise.resolve(
          this.lostTo !== undefined
            ? { ok: false, error: 'taken_over_by_another_engine' }
            : this.lock === undefined
              ? { ok: false, error: 'not_held' }
              : { ok: true },
        ),
      data_dir_writable: async () => {
        const probe = path.join(this.options.dataDir, `.ready-${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
        try {
          const handle = await open(probe, 'wx', 0o600);
          try {
            await handle.writeFile('ready\n');
            await handle.sync();
          } finally {
            await handle.close();
          }
        } finally {
          await rm(probe, { force: true });
        }
        return { ok: true };
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.eventLogs.keys()].map((jobId) => this.closeEventLog(jobId)));
    await this.lock?.release();
    this.lock = undefined;
  }

  private jobDir(id: string): string {
    // The last line of defence: every caller validated the id already.
    if (!isJobId(id)) throw new Error('Not a job id.');
    return path.join(this.jobsDir, id);
  }
}

const PRIVATE_DIR = 0o700;

/**
 * Takes group and other permissions away (0755 -> 0700, 0644 -> 0600). It never adds any: a folder its owner made
 * read-only stays read-only. Best effort: a folder this user does not own keeps its modes.
 */
export async function restrict(target: string): Promise<void> {
  try {
    const { mode } = await stat(target);
    if ((mode & 0o077) !== 0) await chmod(target, mode & 0o700);
  } catch {
    // Not ours to change (or gone); the folders the engine makes are private from the start.
  }
}

/** Makes a job folder and everything in it private to this user (folders made before the engine did so). */
async function tighten(dir: string): Promise<void> {
  await restrict(dir);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await tighten(full);
    else if (entry.isFile()) await restrict(full);
  }
}

function eventLine(event: StoredEvent): string {
  return `${JSON.stringify({ id: event.id, event: event.event, data: event.data })}\n`;
}

function parseEventLine(line: string): StoredEvent | undefined {
  if (line.trim() === '') return undefined;
  try {
    const parsed = eventSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Flushes a finished output to disk and derives its strong ETag from its content. */
async function hashAndSync(file: string): Promise<string> {
  const hash = createHash('sha256');
  const handle = await open(file, 'r+');
  try {
    for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return `"${hash.digest('base64url').slice(0, 27)}"`;
}
