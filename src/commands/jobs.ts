// Commands on jobs in the list: cancel, retry (in place of the failed row), remove (cancelling a running job first),
// clear finished or failed ones, copy the id, reveal the audio, and show why a job failed.
import * as vscode from 'vscode';
import { readSettings } from '../config';
import type { JobRecord } from '../jobs/types';
import { Fixes, jobErrorFixes } from '../notify';
import { isFinished } from '../views/labels';
import { type CommandContext, type JobTarget, resolveJob } from './context';

export const cancelJob =
  (ctx: CommandContext) =>
  async (target?: JobTarget): Promise<void> => {
    const job = await resolveJob(ctx, target, (j) => !isFinished(j), 'No job is running.');
    if (!job) return;
    try {
      const supported = await ctx.jobs.cancel(job.id);
      if (!supported)
        ctx.notifier.warn(
          `${ctx.connection.describe(job.service)} cannot cancel jobs; "${job.title}" goes on until it ends.`,
        );
    } catch (error) {
      ctx.notifier.error(`Could not cancel "${job.title}"`, error);
    }
  };

/** Submits the job's input again; the new job takes the failed one's place in the list. */
export const retryJob =
  (ctx: CommandContext) =>
  async (target?: JobTarget): Promise<JobRecord | undefined> => {
    const job = await resolveJob(
      ctx,
      target,
      (j) => j.status === 'failed' || j.status === 'succeeded' || !ctx.jobs.isFollowing(j.id),
      'No job to retry.',
    );
    if (!job) return undefined;
    const settings = readSettings();
    try {
      const again = await ctx.jobs.retry(job.id, {
        ...(settings.introAudioUrl ? { introAudioUrl: settings.introAudioUrl } : {}),
        ...(settings.outroAudioUrl ? { outroAudioUrl: settings.outroAudioUrl } : {}),
      });
      if (again.id !== job.id && job.status === 'failed') await ctx.jobs.remove(job.id);
      return again;
    } catch (error) {
      ctx.notifier.error(`Could not retry "${job.title}"`, error, [Fixes.retryJob(job.id)]);
      return undefined;
    }
  };

/**
 * Removes a job from the list; a job still running is cancelled first (the confirmation says so). From the Jobs view
 * with several rows selected, VS Code passes the clicked row and the selection: all of them are removed, with one
 * confirmation for those still running.
 */
export const removeJob =
  (ctx: CommandContext) =>
  async (target?: JobTarget, selected?: readonly unknown[]): Promise<boolean> => {
    const many = selectedJobs(ctx, target, selected);
    if (many) return removeJobs(ctx, many);
    const job = await resolveJob(ctx, target, () => true, 'The job list is empty.');
    if (!job) return false;
    return removeJobs(ctx, [job]);
  };

/** The jobs of a multi-row selection that includes the clicked row (else undefined: act on the clicked row alone). */
function selectedJobs(ctx: CommandContext, target: JobTarget, selected?: readonly unknown[]): JobRecord[] | undefined {
  if (!Array.isArray(selected) || selected.length < 2) return undefined;
  const ids = selected.flatMap((item: unknown) =>
    typeof item === 'object' && item !== null && typeof (item as { id?: unknown }).id === 'string'
      ? [(item as { id: string }).id]
      : [],
  );
  const clicked = typeof target === 'string' ? target : target?.id;
  if (clicked !== undefined && !ids.includes(clicked)) return undefined;
  const jobs = ids.flatMap((id) => ctx.jobs.get(id) ?? []);
  return jobs.length > 0 ? jobs : undefined;
}

async function removeJobs(ctx: CommandContext, jobs: JobRecord[]): Promise<boolean> {
  const running = jobs.filter((job) => job.status !== 'succeeded' && job.status !== 'failed');
  if (running.length > 0) {
    const question =
      running.length === 1 && jobs.length === 1
        ? `"${running[0]!.title}" is still running. Cancel it and remove it from the list?`
        : running.length === 1
          ? `"${running[0]!.title}" is still running. Cancel it and remove all ${jobs.length} jobs from the list?`
          : `${running.length} of the ${jobs.length} jobs are still running. Cancel them and remove all ${jobs.length} from the list?`;
    const answer = await ctx.notifier.confirm(
      question,
      `The service stops working on ${running.length === 1 ? 'it' : 'them'}, and ${running.length === 1 ? 'its' : 'their'} audio will not be made.`,
      running.length === 1 ? 'Cancel Job and Remove' : 'Cancel Jobs and Remove',
    );
    if (answer !== 'Cancel Job and Remove' && answer !== 'Cancel Jobs and Remove') return false;
  }
  let removedAll = true;
  for (const job of jobs) {
    if (running.includes(job)) {
      try {
        const supported = await ctx.jobs.cancel(job.id);
        if (!supported)
          ctx.notifier.warn(
            `${ctx.connection.describe(job.service)} cannot cancel jobs; "${job.title}" was removed from the list but the service may finish it.`,
          );
      } catch (error) {
        ctx.notifier.error(`Could not cancel "${job.title}"; it stays in the list`, error);
        removedAll = false;
        continue;
      }
    }
    await ctx.jobs.remove(job.id);
  }
  return removedAll;
}

const clear = (ctx: CommandContext, which: 'succeeded' | 'failed') => async (): Promise<number> => {
  const doomed = ctx.jobs
    .all()
    .filter((job) => job.status === which && (which === 'failed' || job.files !== undefined));
  if (doomed.length === 0) {
    ctx.notifier.info(which === 'failed' ? 'No failed jobs to clear.' : 'No finished jobs to clear.');
    return 0;
  }
  for (const job of doomed) await ctx.jobs.remove(job.id);
  ctx.log.info(`cleared ${doomed.length} ${which === 'failed' ? 'failed' : 'finished'} job(s) from the list`);
  return doomed.length;
};

/** Removes every finished job (and its cached audio) from the list. */
export const clearFinished = (ctx: CommandContext) => clear(ctx, 'succeeded');
/** Removes every failed (and cancelled) job from the list. */
export const clearFailed = (ctx: CommandContext) => clear(ctx, 'failed');

export const copyJobId =
  (ctx: CommandContext) =>
  async (target?: JobTarget): Promise<void> => {
    const job = await resolveJob(ctx, target, () => true, 'The job list is empty.');
    if (!job) return;
    await vscode.env.clipboard.writeText(job.id);
    vscode.window.setStatusBarMessage(`$(copy) Copied job id ${job.id.replace(/\$\(/g, '$\u200b(')}`, 3000);
  };

export const revealAudio =
  (ctx: CommandContext) =>
  async (target?: JobTarget): Promise<void> => {
    const job = await resolveJob(ctx, target, (j) => j.files !== undefined, 'No finished job has audio yet.');
    if (!job?.files) return;
    const audio = job.files.audio;
    try {
      await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(audio));
    } catch {
      // No file manager here (VS Code in a browser, or a remote window): say where the file is instead.
      ctx.notifier.info(`The audio of "${job.title}" is at ${audio}`, [
        { title: 'Copy Path', run: () => vscode.env.clipboard.writeText(audio) },
        Fixes.saveAs(job.id),
      ]);
    }
  };

/**
 * A failed job, clicked in the Jobs view: its own error (message and code) with the fix that fits it, and its own
 * lines of the log in a read-only document.
 */
export const showJobError =
  (ctx: CommandContext) =>
  async (target?: JobTarget): Promise<void> => {
    const job = await resolveJob(ctx, target, (j) => j.status === 'failed', 'No job has failed.');
    if (!job) return;
    const code = job.error?.code;
    ctx.notifier.warn(
      `"${job.title}" failed${code ? ` (${code})` : ''}: ${job.error?.message ?? 'The service gave no reason.'}`,
      jobErrorFixes(job),
    );
    await ctx.extensionLog.showJobLines(job.id);
  };
