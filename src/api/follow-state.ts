// What a follower has seen and told of one job: the events already seen (to skip replays), the last status and
// progress (never backwards once terminal), the log lines passed on (bounded), and the clock that ends following a
// job that makes no progress. followJob (follow.ts) drives them over the stream and the status endpoint.
import { createHash } from 'node:crypto';
import { TimeoutError, formatDuration } from './errors';
import type { HttpClient } from './http';
import type { SseItem } from './sse';
import type { OperationScope } from './timing';
import {
  isTerminalStatus,
  type Job,
  type JobEvent,
  type JobStatus,
  type LogFunction,
  type OutputFile,
  type PollingOptions,
  type StreamOptions,
} from './types';

export interface FollowDependencies {
  http: HttpClient;
  /** A job whose status and progress stay the same this long, while its service answers, stops being followed. */
  stallTimeoutMs: number;
  fetchJob(id: string, scope: OperationScope): Promise<Job>;
  polling: Required<PollingOptions>;
  stream: Required<StreamOptions>;
  requestTimeoutMs: number;
  retryAfterCapMs: number;
  log: LogFunction;
  /** Masks the API key in text the service sent (log lines), should a service ever echo it. */
  redact: (text: string) => string;
}

/** Bound on what is remembered for de-duplication; a job with more events than this is not a job. */
const MAX_REMEMBERED_EVENTS = 50_000;
/** Event ids longer than this are remembered by their hash. */
const MAX_ID_CHARS = 200;
/**
 * The longest event id sent back as Last-Event-ID (and passed on with events, for a later follow to resume from). A
 * longer `id:`, or one with characters a header cannot carry as they are (control characters, non-ASCII, spaces at
 * either end), is no id a real service sends (the engine's are numbers): it is not sent back, and the last id stays
 * the one before it, so a hostile service cannot make every reconnect carry a huge or broken header. Such events are
 * still recognised when replayed (by their id's hash), so nothing is shown twice.
 */
export const MAX_LAST_EVENT_ID_CHARS = 256;
const SENDABLE_ID = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** The id to send back as Last-Event-ID, or undefined when it is empty or cannot be sent. */
export function resumableId(id: string | undefined): string | undefined {
  return id && id.length <= MAX_LAST_EVENT_ID_CHARS && SENDABLE_ID.test(id) ? id : undefined;
}
/** A log line from the service is cut here (one line, on a terminal or in the output channel). */
export const MAX_LOG_MESSAGE_CHARS = 1000;
/** Log lines passed on per follow; a real job sends tens. Then one line says the rest were left out. */
export const MAX_LOG_LINES = 1000;
export const LOG_LINES_LEFT_OUT = 'further log lines from the service were left out';

/**
 * Which stream events have been seen. Events with ids are recognised by id (a service that ignores Last-Event-ID
 * and replays them is harmless). Events without ids cannot be told apart that way, and a reconnection may replay the
 * job's history from the start or carry on where it stopped; so each connection's id-less events are compared with
 * the history seen so far, in order, and skipped while they repeat it. The first one that differs, and everything
 * after it, is new. This works for both kinds of service, where skipping a fixed count would drop real events from a
 * service that does not replay.
 */
export class EventHistory {
  private readonly seenIds = new Set<string>();
  private readonly idless: string[] = [];
  private replayCursor: number | undefined = 0;
  lastEventId: string | undefined;

  constructor(lastEventId?: string) {
    this.lastEventId = resumableId(lastEventId);
  }

  startConnection(): void {
    this.replayCursor = 0;
  }

  /** Records the event and says whether it is new. */
  isNew(item: Extract<SseItem, { kind: 'event' }>): boolean {
    if (item.id === '') {
      // `id:` with an empty value resets the last event id (the SSE standard); the event is then id-less.
      this.lastEventId = undefined;
    } else if (item.id !== undefined && resumableId(item.id)) {
      // An id that cannot be sent back (too long, unprintable) leaves the last one as it was; see resumableId.
      this.lastEventId = item.id;
    }
    if (item.id) {
      const key = item.id.length > MAX_ID_CHARS ? digest(item.id) : item.id;
      if (this.seenIds.has(key)) return false;
      if (this.seenIds.size < MAX_REMEMBERED_EVENTS) this.seenIds.add(key);
      this.replayCursor = undefined;
      return true;
    }
    // A hash, not the text: an endless stream of large id-less events must not be kept in memory.
    const signature = digest(`${item.event ?? ''}\n${item.data}`);
    if (
      this.replayCursor !== undefined &&
      this.replayCursor < this.idless.length &&
      this.idless[this.replayCursor] === signature
    ) {
      this.replayCursor++;
      return false;
    }
    this.replayCursor = undefined;
    if (this.idless.length < MAX_REMEMBERED_EVENTS) this.idless.push(signature);
    return true;
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}

/** Control characters (a terminal's escape sequences), bidirectional overrides (text shown in another order), space. */
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\s]+/g;

/** A log line from the service as one bounded line: what a terminal would act on, or reorder, becomes a space. */
export function boundedLogLine(message: string): string {
  const single = message
    .slice(0, MAX_LOG_MESSAGE_CHARS * 4)
    .replace(UNPRINTABLE, ' ')
    .trim();
  return single.length > MAX_LOG_MESSAGE_CHARS ? `${single.slice(0, MAX_LOG_MESSAGE_CHARS - 1)}…` : single;
}

/**
 * Ends following when the job makes no progress for `ms` while its service answers: the scope's signal aborts with a
 * TimeoutError. Any news of the job (another status, more progress) and any outage restart the clock, so a service
 * that is down is still waited for; one that answers, or streams logs, without moving the job is not, for ever.
 */
export class StallClock {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  readonly signal = this.controller.signal;

  constructor(
    private readonly ms: number,
    private readonly id: string,
  ) {
    this.restart();
  }

  restart(): void {
    if (this.controller.signal.aborted) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.controller.abort(
        new TimeoutError(
          `Stopped following job ${this.id}: its service reported no progress for ${formatDuration(this.ms)}.`,
          'idle',
          this.ms,
          { code: 'job_stalled' },
        ),
      );
    }, this.ms);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}

/** What the follower has told its consumer, so that nothing is said twice, and nothing goes backwards. */
export class FollowState {
  readonly history: EventHistory;
  private last: { status: JobStatus; progress?: number } | undefined;
  private logLines = 0;
  private saidBackwards = false;
  /** The results the stream announced (the spec's order: status, logs, result, end). */
  results: OutputFile[] | undefined;

  constructor(
    lastEventId: string | undefined,
    private readonly deps: FollowDependencies,
    private readonly id: string,
    private readonly stall: StallClock,
  ) {
    this.history = new EventHistory(lastEventId);
  }

  /** The terminal status already told, if any. */
  get terminal(): JobStatus | undefined {
    return this.last && isTerminalStatus(this.last.status) ? this.last.status : undefined;
  }

  /**
   * A status event when it says something new: another status, or more progress. Nothing once a terminal status was
   * told (a later event or poll that says otherwise is ignored, logged once), and progress never goes down.
   */
  statusEvent(status: JobStatus, progress: number | undefined, eventId?: string): JobEvent | undefined {
    const last = this.last;
    if (last && isTerminalStatus(last.status)) {
      if (status !== last.status && !this.saidBackwards) {
        this.saidBackwards = true;
        this.deps.log(
          'debug',
          `job ${this.id}: ignored the status "${boundedLogLine(status).slice(0, 40)}" after "${last.status}" (a finished job does not change)`,
        );
      }
      return undefined;
    }
    const shown = progress === undefined || last?.progress === undefined ? progress : Math.max(progress, last.progress);
    if (last && last.status === status && (shown === undefined || shown === last.progress)) return undefined;
    this.last = shown === undefined ? { status } : { status, progress: shown };
    this.stall.restart();
    const event: JobEvent = { type: 'status', status };
    if (shown !== undefined) event.progress = shown;
    if (eventId) event.eventId = eventId;
    return event;
  }

  /** A log event to pass on, bounded; undefined once the cap was reached (the cap itself is said once). */
  logEvent(level: string, message: string, eventId: string | undefined, createdAt?: string): JobEvent | undefined {
    this.logLines++;
    if (this.logLines > MAX_LOG_LINES + 1) return undefined;
    if (this.logLines === MAX_LOG_LINES + 1) {
      this.deps.log('debug', `job ${this.id}: ${LOG_LINES_LEFT_OUT} (after ${MAX_LOG_LINES})`);
      return { type: 'log', level: 'warn', message: LOG_LINES_LEFT_OUT };
    }
    const event: JobEvent = {
      type: 'log',
      level: boundedLogLine(level).slice(0, 20) || 'info',
      message: boundedLogLine(this.deps.redact(message)),
    };
    if (createdAt !== undefined) event.createdAt = boundedLogLine(createdAt).slice(0, 40);
    if (eventId) event.eventId = eventId;
    return event;
  }
}
