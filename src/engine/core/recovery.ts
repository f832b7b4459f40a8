// Recovery, written once for both modes: what becomes of a job whose run was lost (the process running it died:
// crash, kill -9, power loss). The decision is here: the lost run counts toward --max-crashes; past it the job fails
// `interrupted`, else it runs again from the start, each with the words its stream and its record get. Each backend
// finds its lost runs its own way and writes the outcome through its own storage: the embedded engine once at start,
// for every job its JobStore still holds as `processing` (embedded/recovery.ts: only one engine owns a data dir, so
// such a run is lost for certain); a team worker when it claims a job whose lease expired (team/worker.ts
// PgWorkQueue.claim: the lease is the only sign that a worker on another machine is gone, and the claiming worker
// runs the job at once instead of queueing it again).
import type { JobFailure, StoredJob } from './job-store';
import type { NewEvent } from './live-job';
import { logEvent, statusEvent } from './stream-events';

/** Who ran the lost run: the embedded engine itself, or a team worker. */
export type LostBy = 'engine' | 'worker';

export type LostRunOutcome =
  /** Run it again: `message` goes to the job's stream (a warning), `crashes` to its record. */
  | { retry: true; crashes: number; message: string }
  /** Too many lost runs: the job fails with `error`. */
  | { retry: false; crashes: number; error: JobFailure };

/** The outcome for a job one of whose runs was lost, its record as it was saved when the run was lost. */
export function afterLostRun(record: Pick<StoredJob, 'crashes'>, maxCrashes: number, lostBy: LostBy): LostRunOutcome {
  const crashes = record.crashes + 1;
  if (crashes > maxCrashes) {
    const message =
      lostBy === 'engine'
        ? `The engine stopped unexpectedly ${crashes} times while running this job, so it was not tried again.`
        : `The worker running this job stopped unexpectedly ${crashes} times, so it was not tried again.`;
    return { retry: false, crashes, error: { code: 'interrupted', message } };
  }
  const message =
    lostBy === 'engine'
      ? 'The engine stopped unexpectedly while this job was running; it will run again from the start.'
      : 'The worker running this job stopped unexpectedly; another worker runs it again from the start.';
  return { retry: true, crashes, message };
}

/** The events of a job given back to the queue (a lost run, a stop, a dependency down): why, then `queued`. */
export function requeueEvents(reason: string, progress: number): NewEvent[] {
  return [logEvent('warn', reason), statusEvent('queued', progress, null)];
}
