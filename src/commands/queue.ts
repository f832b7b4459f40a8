// The listening queue from the Jobs view and the palette: Play Next puts jobs first, Add to Queue last (several
// selected rows at once), Remove from Queue takes one out. A job still converting can be queued: it plays when ready.
import type { JobRecord } from '../jobs/types';
import { type CommandContext, type JobTarget, resolveJob } from './context';

const queueable = (job: JobRecord) => job.status !== 'failed';

async function targets(ctx: CommandContext, target: JobTarget, selected: unknown): Promise<JobRecord[]> {
  // From the tree VS Code passes the clicked row and every selected row.
  if (Array.isArray(selected) && selected.length > 1) {
    return selected
      .filter((j): j is JobRecord => typeof j === 'object' && j !== null && typeof (j as JobRecord).id === 'string')
      .filter(queueable);
  }
  const job = await resolveJob(ctx, target, queueable, 'No job can be queued: convert something first.');
  return job ? [job] : [];
}

export const playNext =
  (ctx: CommandContext) =>
  async (target?: JobTarget, selected?: unknown): Promise<void> => {
    const jobs = await targets(ctx, target, selected);
    if (jobs.length > 0) ctx.queue.playNext(...jobs.map((job) => job.id));
  };

export const addToQueue =
  (ctx: CommandContext) =>
  async (target?: JobTarget, selected?: unknown): Promise<void> => {
    const jobs = await targets(ctx, target, selected);
    if (jobs.length > 0) ctx.queue.add(...jobs.map((job) => job.id));
  };

export const removeFromQueue =
  (ctx: CommandContext) =>
  async (target?: JobTarget): Promise<void> => {
    const job = await resolveJob(ctx, target, (j) => ctx.queue.has(j.id), 'The listening queue is empty.');
    if (job) ctx.queue.remove(job.id);
  };
