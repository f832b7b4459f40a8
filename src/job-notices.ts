// What the user hears when a job ends: a finished job started from this VS Code opens in the player (or says it is
// ready), a failed one says why with the fix that fits, and a job the extension lost track of says so.
import { readSettings } from './config';
import { Disposable } from './disposable';
import type { JobTracker } from './jobs/job-tracker';
import type { ListeningQueue } from './jobs/listening-queue';
import { Fixes, jobErrorFixes, type Notifier } from './notify';
import type { PlayerController } from './webview/player-panel';

export class JobNotices extends Disposable {
  constructor(jobs: JobTracker, notifier: Notifier, player: PlayerController, queue: ListeningQueue) {
    super();
    // A queued job plays in its turn: while the player has something, it neither opens nor announces itself.
    const waitsItsTurn = (id: string) => queue.has(id) && player.current !== undefined;
    this.register(
      // Listening starts with the first part, while the rest is converted.
      jobs.onDidGetFirstPart(({ job, startedHere }) => {
        if (waitsItsTurn(job.id)) return;
        if (startedHere && readSettings().openPlayerWhenDone) void player.open(job.id, { preserveFocus: true });
      }),
    );
    this.register(
      jobs.onDidFinish(({ job, startedHere }) => {
        if (job.status === 'succeeded') {
          if (!startedHere || waitsItsTurn(job.id)) return;
          if (readSettings().openPlayerWhenDone) void player.open(job.id, { preserveFocus: true });
          else notifier.info(`"${job.title}" is ready to play.`, [Fixes.openPlayer(job.id), Fixes.saveAs(job.id)]);
          return;
        }
        if (job.status === 'failed' && job.error?.code !== 'cancelled') {
          const reason = job.error?.message ?? 'The service gave no reason.';
          notifier.warn(
            `"${job.title}" failed${job.error?.code ? ` (${job.error.code})` : ''}: ${reason}`,
            jobErrorFixes(job),
          );
        }
      }),
    );
    this.register(
      // Once per service and outage; following goes on in the background (src/api/follow.ts).
      jobs.onDidLoseContact(({ job, message }) => {
        notifier.warn(
          `Cannot reach the job service for "${job.title}": ${message} Article Audio keeps trying in the background.`,
          [Fixes.showLog],
        );
      }),
    );
    this.register(
      jobs.onDidLoseTrack(({ job, error }) => {
        notifier.error(`Article Audio lost track of "${job.title}"`, error, [Fixes.retryJob(job.id)]);
      }),
    );
  }
}
