// The parts of a job's audio that the service announces while the job runs, fetched into the audio cache so that
// listening can start before the whole file exists: in order, each once (a replayed stream repeats them), one after
// another, and bounded (issue 23): at most MAX_PARTS parts and MAX_PARTS_AHEAD waiting (PartSequence), and their
// files together at most the cap of the job's whole audio. A part that cannot be had ends the job's parts; the
// finished file is what counts. JobTracker hands each announced part here and hears of each one added.
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  DOWNLOAD_LIMITS,
  type JobPart,
  MAX_PARTS,
  MAX_PARTS_AHEAD,
  PartSequence,
  downloadLimitFor,
  formatBytes,
} from '../api/index';
import type { JobClient } from './services';
import type { JobRecord } from './types';

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export interface LivePartsHost {
  /** The job's folder in the audio cache. */
  cacheDir(jobId: string): string;
  warn(message: string): void;
  /** Part `index` was added to `job.parts`. */
  added(job: JobRecord, index: number): void;
}

export class LiveParts {
  /** Per running job: which parts came in (in order, each once) and the chain of their downloads. */
  private readonly sequences = new Map<string, PartSequence>();
  private readonly downloads = new Map<string, Promise<void>>();
  /** Per running job: bytes of its part files in the cache (audio and transcripts), counted against budget(). */
  private readonly bytes = new Map<string, number>();
  /** Jobs whose further parts were left out (said once in the log). */
  private readonly leftOut = new Set<string>();

  constructor(private readonly host: LivePartsHost) {}

  /**
   * Waits for the downloads of the parts announced so far (each is bounded and ends, well or not). The job's end
   * waits for them before its finished files, so that a job that succeeds has every part it announced: the player
   * plays on from them to the end instead of switching to the finished file (issue 26). Before, a part still
   * downloading when the finished file arrived was dropped.
   */
  async settle(jobId: string): Promise<void> {
    await this.downloads.get(jobId)?.catch(() => undefined);
  }

  /** Forgets a job's parts in flight (the job ended or was removed). */
  forget(jobId: string): void {
    this.sequences.delete(jobId);
    this.downloads.delete(jobId);
    this.bytes.delete(jobId);
    this.leftOut.delete(jobId);
  }

  /**
   * Downloads announced parts in order, each once (a replayed stream repeats them), while the job runs. Bounded: at most
   * MAX_PARTS parts and MAX_PARTS_AHEAD waiting (PartSequence), and their files together at most partBudget.
   */
  receive(job: JobRecord, part: JobPart, client: JobClient, signal: AbortSignal): void {
    let sequence = this.sequences.get(job.id);
    if (!sequence) {
      sequence = new PartSequence(job.parts?.length ?? 0);
      this.sequences.set(job.id, sequence);
    }
    const leftOut = sequence.leftOut;
    const ready = sequence.accept(part);
    if (sequence.leftOut > leftOut) {
      this.leaveOut(
        job,
        part.index >= MAX_PARTS
          ? `the service announced more than ${MAX_PARTS} parts`
          : `part ${part.index} came more than ${MAX_PARTS_AHEAD} ahead of part ${sequence.delivered}`,
      );
    }
    for (const next of ready) {
      const previous = this.downloads.get(job.id) ?? Promise.resolve();
      this.downloads.set(
        job.id,
        previous.then(() => this.download(job, next, client, signal)),
      );
    }
  }

  /**
   * The most bytes a job's parts may take in the cache, audio and transcripts together: the cap of the job's whole
   * audio (from its announced length, else the cap for audio of unknown length), since its parts are that audio cut
   * up. Each part is also capped by its own length (download-limits.ts).
   */
  private budget(job: JobRecord): number {
    return job.durationS !== undefined
      ? downloadLimitFor({ url: '', contentType: 'audio/mpeg', durationS: job.durationS }).maxBytes
      : DOWNLOAD_LIMITS.audioUnknownBytes;
  }

  /** Bytes the job's parts take in the cache; counted from its files the first time (parts kept before a reload). */
  private async bytesUsed(job: JobRecord): Promise<number> {
    const known = this.bytes.get(job.id);
    if (known !== undefined) return known;
    let used = 0;
    for (const kept of job.parts ?? []) {
      for (const file of [kept.audio, kept.transcript]) {
        if (file)
          used += await stat(file).then(
            (info) => info.size,
            () => 0,
          );
      }
    }
    this.bytes.set(job.id, used);
    return used;
  }

  /** A part file's cap: its own (download-limits.ts), or what is left of the job's part budget when that is less. */
  private limit(
    output: { url: string; contentType: string; durationS?: number },
    budget: number,
    used: number,
  ): { maxBytes: number; maxBytesBasis: string } {
    const own = downloadLimitFor(output);
    return own.maxBytes <= budget - used
      ? { maxBytes: own.maxBytes, maxBytesBasis: own.basis }
      : {
          maxBytes: budget - used,
          maxBytesBasis: `what is left of the ${formatBytes(budget)} the parts of this job may take`,
        };
  }

  private leaveOut(job: JobRecord, why: string): void {
    if (this.leftOut.has(job.id)) return;
    this.leftOut.add(job.id);
    this.host.warn(
      `job ${job.id}: further parts are left out (${why}); the whole audio is downloaded when the job finishes`,
    );
  }

  private async download(job: JobRecord, part: JobPart, client: JobClient, signal: AbortSignal): Promise<void> {
    if (signal.aborted || job.files) return;
    // A part before this one could not be downloaded: this one would never be played (parts play in order).
    if ((job.parts?.length ?? 0) !== part.index) return;
    const budget = this.budget(job);
    let used = await this.bytesUsed(job);
    if (used >= budget) {
      this.leaveOut(job, `its parts reached ${formatBytes(budget)}, the most its audio can take`);
      return;
    }
    const dir = path.join(this.host.cacheDir(job.id), 'parts');
    const name = `part-${String(part.index).padStart(4, '0')}`;
    const sizeOf = (file: string) =>
      stat(file).then(
        (info) => info.size,
        () => 0,
      );
    try {
      await mkdir(dir, { recursive: true });
      const audio = path.join(dir, `${name}.mp3`);
      const audioOutput = { url: part.url, contentType: 'audio/mpeg', durationS: part.durationS };
      await client.downloadOutput(audioOutput, audio, { signal, ...this.limit(audioOutput, budget, used) });
      used += await sizeOf(audio);
      this.bytes.set(job.id, used);
      let transcript: string | undefined;
      if (part.transcriptUrl && used < budget) {
        transcript = path.join(dir, `${name}.vtt`);
        const transcriptOutput = { url: part.transcriptUrl, contentType: 'text/vtt' };
        await client
          .downloadOutput(transcriptOutput, transcript, { signal, ...this.limit(transcriptOutput, budget, used) })
          .then(async () => {
            used += await sizeOf(transcript!);
            this.bytes.set(job.id, used);
          })
          .catch((error: unknown) => {
            this.host.warn(
              `job ${job.id}: could not download the transcript of part ${part.index}: ${reasonOf(error)}`,
            );
            transcript = undefined;
          });
      }
      if (job.files || (job.parts?.length ?? 0) !== part.index) return;
      job.parts = [
        ...(job.parts ?? []),
        {
          index: part.index,
          startS: part.startS,
          durationS: part.durationS,
          final: part.final,
          audio,
          ...(transcript ? { transcript } : {}),
        },
      ];
      this.host.added(job, part.index);
    } catch (error) {
      // Parts only let listening start early; the finished job's files are what counts. Parts play in order, so the
      // ones after this are left out too.
      if (!signal.aborted) {
        this.host.warn(`job ${job.id}: could not download part ${part.index}: ${reasonOf(error)}`);
        this.leaveOut(job, `part ${part.index} could not be downloaded`);
      }
    }
  }
}
