// The engine's metrics in the Prometheus text format (prom-client), one registry per process: what the HTTP layer,
// the intake and the runner count, and the gauges a node reads when it is scraped (its queue, its workers). Labels
// are low-cardinality on purpose (model, outcome, failure code, dependency): a scrape shows counts, never a job id,
// a title, a URL, a token or its name, so /metrics is served without a token (README, "Metrics").
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** How a run ended, as the runner saw it. */
export type RunOutcome = 'succeeded' | 'failed' | 'requeued' | 'lost';

/** What a node reads from its queue at scrape time; undefined fields are not exported. */
export interface QueueGauges {
  /** Jobs waiting to run. */
  queued: number;
  /** Age of the oldest waiting job, seconds; 0 when none waits. */
  oldestQueuedAgeS: number;
  /** Workers whose heartbeat is recent (team API nodes). */
  workersAlive?: number;
}

const PREFIX = 'article_audio_';
/** Runs take seconds to many minutes (a long article through speech synthesis). */
const RUN_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 3600];
const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class EngineMetrics {
  readonly registry = new Registry();
  readonly jobsSubmitted: Counter<'model'>;
  readonly jobsFinished: Counter<'model' | 'outcome'>;
  readonly jobFailures: Counter<'code'>;
  readonly runDuration: Histogram<'model' | 'outcome'>;
  readonly dependencyRetries: Counter<'dependency'>;
  readonly eventDeliveryLag: Histogram;
  private queueSource: (() => Promise<QueueGauges>) | undefined;
  private followersSource: (() => number) | undefined;

  constructor(role: 'embedded' | 'api' | 'worker') {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ role });
    this.jobsSubmitted = new Counter({
      name: `${PREFIX}jobs_submitted_total`,
      help: 'Jobs accepted (an idempotent replay is not counted again).',
      labelNames: ['model'],
      registers,
    });
    this.jobsFinished = new Counter({
      name: `${PREFIX}runs_finished_total`,
      help: 'Runs this process ended, by model and outcome (succeeded, failed, requeued: given back to the queue, lost: the run lost its job).',
      labelNames: ['model', 'outcome'],
      registers,
    });
    this.jobFailures = new Counter({
      name: `${PREFIX}job_failures_total`,
      help: 'Jobs this process failed, by error code.',
      labelNames: ['code'],
      registers,
    });
    this.runDuration = new Histogram({
      name: `${PREFIX}run_duration_seconds`,
      help: 'Time from a run starting to its end being written, by model and outcome.',
      labelNames: ['model', 'outcome'],
      buckets: RUN_BUCKETS,
      registers,
    });
    this.dependencyRetries = new Counter({
      name: `${PREFIX}dependency_retries_total`,
      help: 'Calls to a dependency (database, storage) tried again after a failure that passes.',
      labelNames: ['dependency'],
      registers,
    });
    this.eventDeliveryLag = new Histogram({
      name: `${PREFIX}event_delivery_lag_seconds`,
      help: "Time from a job's new events being announced to this node to their reaching its followers.",
      buckets: LAG_BUCKETS,
      registers,
    });
    const metrics = this as EngineMetrics;
    new Gauge({
      name: `${PREFIX}stream_followers`,
      help: 'Open job streams on this node.',
      registers,
      collect() {
        if (metrics.followersSource) this.set(metrics.followersSource());
      },
    });
    let last: Promise<QueueGauges | undefined> | undefined;
    // The three queue gauges share one read per scrape.
    const read = (): Promise<QueueGauges | undefined> => {
      last ??= (metrics.queueSource?.() ?? Promise.resolve(undefined))
        .catch(() => undefined)
        .finally(() => setImmediate(() => (last = undefined)));
      return last;
    };
    new Gauge({
      name: `${PREFIX}queue_depth`,
      help: 'Jobs waiting to run.',
      registers,
      async collect() {
        const gauges = await read();
        if (gauges) this.set(gauges.queued);
      },
    });
    new Gauge({
      name: `${PREFIX}oldest_queued_age_seconds`,
      help: 'Age of the oldest waiting job (0 when none waits).',
      registers,
      async collect() {
        const gauges = await read();
        if (gauges) this.set(gauges.oldestQueuedAgeS);
      },
    });
    new Gauge({
      name: `${PREFIX}workers_alive`,
      help: 'Team workers whose heartbeat is recent (API nodes only).',
      registers,
      async collect() {
        const gauges = await read();
        if (gauges?.workersAlive !== undefined) this.set(gauges.workersAlive);
      },
    });
  }

  /** Where the queue gauges come from on a scrape (the in-memory queue, or Postgres). */
  readQueueFrom(source: () => Promise<QueueGauges>): void {
    this.queueSource = source;
  }

  readFollowersFrom(source: () => number): void {
    this.followersSource = source;
  }

  /** One run ended. */
  runEnded(model: string, outcome: RunOutcome, seconds: number, failureCode?: string): void {
    this.jobsFinished.inc({ model, outcome });
    this.runDuration.observe({ model, outcome }, seconds);
    if (outcome === 'failed') this.jobFailures.inc({ code: failureCode ?? 'internal' });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/**
 * Which dependency a retried call of a run was about: `storage` (parts and outputs: the data dir, the shared folder
 * or S3), `work_dir` (the run's scratch folder), else `database` (the job's record and events: Postgres, or the
 * embedded engine's data dir).
 */
export function dependencyOf(what: string): 'storage' | 'work_dir' | 'database' {
  if (/^storing /.test(what)) return 'storage';
  if (/run folder/.test(what)) return 'work_dir';
  return 'database';
}
