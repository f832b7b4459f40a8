// Following a job to its end: the event stream first (spec 4.3), reconnected with Last-Event-ID and the service's
// `retry:` hint, and the status endpoint (4.2) polled with the spec's backoff when the stream cannot be opened or
// keeps dropping. Whatever the transport, each event is yielded at most once, and the last one is always `end` with
// the job as the status endpoint reports it.
//
// What a hostile or broken service sends is bounded here, for the extension and the command line alike (issue 23): a
// status never moves back once it is terminal and progress never goes down; log lines are one line each, cut at
// MAX_LOG_MESSAGE_CHARS, and at most MAX_LOG_LINES per follow (then one line says the rest was left out); what is
// remembered to skip replays is hashed and bounded; and a job that makes no progress for `stallTimeoutMs` while its
// service answers stops being followed, however busy its stream is.
import { createHash } from 'node:crypto';
import {
  ArticleAudioError,
  AuthenticationError,
  ConnectionError,
  RateLimitError,
  ServerError,
  TimeoutError,
  formatDuration,
} from './errors';
import { discard, type HttpClient } from './http';
import { readLogEvent, readResultEvent, readStatusEvent } from './schemas';
import { EventTooLargeError, readEventStream, type SseItem } from './sse';
import { OperationScope, PollingSchedule, backoffDelay } from './timing';
import {
  isTerminalStatus,
  type FollowOptions,
  type Job,
  type JobEvent,
  type JobPart,
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

export const DEFAULT_STREAM: Required<StreamOptions> = {
  idleTimeoutMs: 45_000,
  maxFailures: 5,
  reconnectMs: 1000,
  statusCheckMs: 60_000,
};

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
function resumableId(id: string | undefined): string | undefined {
  return id && id.length <= MAX_LAST_EVENT_ID_CHARS && SENDABLE_ID.test(id) ? id : undefined;
}
/** A log line from the service is cut here (one line, on a terminal or in the output channel). */
export const MAX_LOG_MESSAGE_CHARS = 1000;
/** Log lines passed on per follow; a real job sends tens. Then one line says the rest were left out. */
export const MAX_LOG_LINES = 1000;
export const LOG_LINES_LEFT_OUT = 'further log lines from the service were left out';
/** Default of `stallTimeoutMs`: no change of status or progress for this long, while the service answers. */
export const DEFAULT_STALL_TIMEOUT_MS = 30 * 60_000;
const MAX_RECONNECT_BACKOFF_MS = 30_000;
/**
 * A service answers a stream's headers at once (the events come later); one that has not within this time is hung,
 * and the user hears "cannot reach" within it rather than after the full request limit (bench/service-down.ts).
 */
const STREAM_HEADERS_TIMEOUT_MS = 10_000;
/** How long the stream is read on after a terminal status, for the result and `end` that should follow it. */
const TERMINAL_GRACE_MS = 2000;
/** The longest wait before reconnecting within that grace. */
const TERMINAL_RECONNECT_MS = 250;

/**
 * Parts of one job that are passed on. The engine sends about 150 for its longest article (parts of up to 60 s), and a
 * service with 10 s parts fits 5 hours; parts beyond are left out (the finished file brings the whole audio), so a
 * service announcing endless parts cannot grow the cache or the job list without end.
 */
export const MAX_PARTS = 2000;
/**
 * How far ahead of the next expected part a part may arrive and wait in memory for the ones before it. A part further
 * ahead is left out, so the parts waiting their turn are at most this many.
 */
export const MAX_PARTS_AHEAD = 64;

/**
 * Puts announced parts in order, each once: a part seen before (a replayed stream, a reconnect that started over) is
 * dropped, and one that arrives ahead of a missing one waits for it (up to MAX_PARTS_AHEAD ahead). Parts from index
 * MAX_PARTS on are left out.
 */
export class PartSequence {
  private readonly waiting = new Map<number, JobPart>();
  /** Parts left out: from index MAX_PARTS on, or more than MAX_PARTS_AHEAD ahead of the next expected one. */
  leftOut = 0;

  /** `next`: the index expected first (the parts before it were delivered earlier, say before a reload). */
  constructor(private next = 0) {}

  /** The parts that are now next in order (none, this one, or this one and those that waited for it). */
  accept(part: JobPart): JobPart[] {
    if (part.index < this.next || this.waiting.has(part.index)) return [];
    if (part.index >= MAX_PARTS || part.index >= this.next + MAX_PARTS_AHEAD) {
      this.leftOut++;
      return [];
    }
    this.waiting.set(part.index, part);
    const ready: JobPart[] = [];
    for (let found = this.waiting.get(this.next); found; found = this.waiting.get(this.next)) {
      this.waiting.delete(this.next);
      ready.push(found);
      this.next++;
    }
    return ready;
  }

  /** How many parts have been delivered in order. */
  get delivered(): number {
    return this.next;
  }

  /** How many parts wait in memory for one before them. */
  get waitingCount(): number {
    return this.waiting.size;
  }
}

/** The parts of a job's audio from its events, each once and in order; ends when the events end. */
export async function* partsOf(
  events: AsyncIterable<JobEvent>,
  sequence = new PartSequence(),
): AsyncGenerator<JobPart> {
  for await (const event of events) {
    if (event.type === 'result' && event.part) yield* sequence.accept(event.part);
  }
}

/** Failures that may pass by themselves: the follower waits and tries again instead of giving up. */
function isTransient(error: unknown): boolean {
  return (
    error instanceof ConnectionError ||
    error instanceof ServerError ||
    error instanceof RateLimitError ||
    (error instanceof TimeoutError && error.kind !== 'deadline')
  );
}

function retryAfterOf(error: unknown): number | undefined {
  return error instanceof RateLimitError || error instanceof ServerError ? error.retryAfterMs : undefined;
}

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
class StallClock {
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
class FollowState {
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

type StreamOutcome = { kind: 'terminal' } | { kind: 'fallback'; reason: string; error: ArticleAudioError };

export async function* followJob(
  deps: FollowDependencies,
  id: string,
  options: FollowOptions = {},
): AsyncGenerator<JobEvent> {
  const stall = new StallClock(deps.stallTimeoutMs, id);
  const signals = [options.signal, stall.signal].filter((signal): signal is AbortSignal => !!signal);
  const scope = new OperationScope(AbortSignal.any(signals), options.deadline, `following job ${id}`);
  const state = new FollowState(options.lastEventId, deps, id, stall);
  try {
    scope.throwIfDone();
    const transport = options.transport ?? 'auto';
    if (transport === 'poll') {
      yield { type: 'transport', mode: 'poll', reason: 'polling was requested' };
    } else {
      const outcome = yield* followStream(deps, id, scope, state, stall);
      if (outcome.kind === 'fallback') {
        if (transport === 'stream') throw outcome.error;
        deps.log('info', `job ${id}: following by polling, because ${outcome.reason}`);
        yield { type: 'transport', mode: 'poll', reason: outcome.reason };
      }
    }
    // After a terminal stream event this reads the final job (with its outputs); otherwise it polls to the end.
    const job = yield* pollToEnd(deps, id, scope, state, stall);
    yield { type: 'end', job };
  } finally {
    stall.dispose();
  }
}

/** Status checks that may still disagree with a terminal status the stream sent, before the stream's word is taken. */
const CHECKS_AFTER_TERMINAL = 3;

async function* pollToEnd(
  deps: FollowDependencies,
  id: string,
  scope: OperationScope,
  state: FollowState,
  stall: StallClock,
): AsyncGenerator<JobEvent, Job> {
  const schedule = new PollingSchedule(deps.polling);
  let failures = 0;
  let disagreements = 0;
  for (;;) {
    let job: Job;
    try {
      job = await deps.fetchJob(id, scope);
      failures = 0;
    } catch (error) {
      if (scope.signal.aborted) throw scope.reason();
      // The HTTP layer has retried this check already. A service that is down is waited for on the polling schedule
      // until the caller's deadline or abort, telling the consumer once per outage: the one place that keeps trying.
      if (!isTransient(error)) throw error;
      stall.restart();
      const wait = Math.max(retryAfterOf(error) ?? 0, schedule.next());
      if (++failures === 1) yield { type: 'unreachable', message: (error as Error).message, retryInMs: wait };
      deps.log(
        'warn',
        `job ${id}: checking the status failed (${(error as Error).message}); checking again in ${formatDuration(wait)}`,
      );
      await scope.sleep(wait);
      continue;
    }
    const told = state.terminal;
    const event = state.statusEvent(job.status, job.progress);
    if (event) yield event;
    if (isTerminalStatus(job.status)) return job;
    if (told !== undefined && ++disagreements >= CHECKS_AFTER_TERMINAL) {
      // The stream said the job ended and the status endpoint keeps saying it did not: a finished job does not start
      // again, so the stream's word stands (with the results it announced) rather than following for ever.
      deps.log(
        'warn',
        `job ${id}: the service said it ended (${told}) but its status says otherwise; taking it as ${told}`,
      );
      return {
        ...job,
        status: told,
        ...(told === 'succeeded' ? { progress: 1 } : {}),
        outputs: told === 'succeeded' && state.results ? { results: state.results } : job.outputs,
      };
    }
    // An unknown status is not terminal: keep polling on the same growing schedule, never faster.
    await scope.sleep(schedule.next());
  }
}

/** Checks the status endpoint while a stream brings nothing new, in case the service finished without saying so. */
class StatusWatch {
  private lastEvidence = Date.now();
  constructor(
    private readonly deps: FollowDependencies,
    private readonly id: string,
    private readonly scope: OperationScope,
    private readonly state: FollowState,
  ) {}

  sawEvent(): void {
    this.lastEvidence = Date.now();
  }

  /** Yields a status event if the job changed; returns whether the job is finished. */
  async *checkIfDue(): AsyncGenerator<JobEvent, boolean> {
    if (Date.now() - this.lastEvidence < this.deps.stream.statusCheckMs) return false;
    this.lastEvidence = Date.now();
    let job: Job;
    try {
      job = await this.deps.fetchJob(this.id, this.scope);
    } catch (error) {
      if (this.scope.signal.aborted) throw this.scope.reason();
      if (!isTransient(error)) throw error;
      this.deps.log(
        'warn',
        `job ${this.id}: checking the status beside the stream failed (${(error as Error).message})`,
      );
      return false;
    }
    const event = this.state.statusEvent(job.status, job.progress);
    if (event) yield event;
    return isTerminalStatus(job.status);
  }
}

function streamEndedEarly(id: string): ConnectionError {
  return new ConnectionError(`The event stream of job ${id} closed before the job finished.`, true, {
    code: 'stream_closed',
  });
}

function idleError(id: string, ms: number): TimeoutError {
  return new TimeoutError(`The event stream of job ${id} sent nothing for ${formatDuration(ms)}.`, 'idle', ms, {
    code: 'stream_idle',
  });
}

async function* followStream(
  deps: FollowDependencies,
  id: string,
  scope: OperationScope,
  state: FollowState,
  stall: StallClock,
): AsyncGenerator<JobEvent, StreamOutcome> {
  const { http } = deps;
  let url = '';
  const operation = `opening the event stream of job ${id}`;
  const watch = new StatusWatch(deps, id, scope, state);
  let failures = 0;
  let lastFailure: ArticleAudioError | undefined;
  let retryHintMs: number | undefined;
  let waitMs = 0;
  let connections = 0;
  let terminalSeen = false;
  /** After a terminal status, how long a dropped stream is reconnected for the result and `end` still to come. */
  let terminalDeadline = 0;

  const delayAfter = (failure: ArticleAudioError | undefined): number => {
    const hinted = retryAfterOf(failure) ?? retryHintMs;
    const delay =
      hinted !== undefined
        ? Math.min(Math.max(0, hinted), deps.retryAfterCapMs)
        : backoffDelay(Math.max(0, failures - 1), deps.stream.reconnectMs, MAX_RECONNECT_BACKOFF_MS);
    // After the terminal status only the result and `end` are missing, and the grace is short: a reconnection that
    // failed while opening (a cut inside the headers) must not wait out the server's `retry:` hint (2 s by default)
    // and lose them.
    return terminalSeen ? Math.min(delay, TERMINAL_RECONNECT_MS) : delay;
  };

  for (;;) {
    if (terminalSeen && Date.now() >= terminalDeadline) return { kind: 'terminal' };
    if (failures >= deps.stream.maxFailures) {
      const reason = `the event stream failed ${failures} times in a row (last: ${lastFailure?.message ?? 'unknown'})`;
      return { kind: 'fallback', reason, error: lastFailure ?? new ConnectionError(reason, true) };
    }
    if (waitMs > 0) {
      deps.log('debug', `job ${id}: reconnecting the event stream in ${formatDuration(waitMs)}`);
      await scope.sleep(waitMs);
    }
    if (connections > 0 && (yield* watch.checkIfDue())) return { kind: 'terminal' };
    connections++;

    url = (await http.readBase()).jobUrl(id, '/stream');
    const connection = new AbortController();
    const signal = AbortSignal.any([scope.signal, connection.signal]);
    const headers: Record<string, string> = { accept: 'text/event-stream', 'cache-control': 'no-cache' };
    if (state.history.lastEventId) headers['last-event-id'] = state.history.lastEventId;
    let response;
    try {
      response = await http.open(
        {
          url,
          operation,
          jobId: id,
          headers,
          headersTimeoutMs: Math.min(deps.requestTimeoutMs, STREAM_HEADERS_TIMEOUT_MS),
        },
        signal,
        scope,
      );
    } catch (error) {
      if (!(error instanceof ArticleAudioError) || !isTransient(error)) throw error;
      stall.restart();
      failures++;
      lastFailure = error;
      waitMs = delayAfter(error);
      if (failures === 1) yield { type: 'unreachable', message: error.message, retryInMs: waitMs };
      continue;
    }

    const type = String(response.headers['content-type'] ?? '');
    if (response.statusCode !== 200 || !/^text\/event-stream\b/i.test(type)) {
      let error: ArticleAudioError;
      if (response.statusCode >= 200 && response.statusCode <= 299) {
        discard(response.body);
        error = http.invalid(
          { operation, url },
          response,
          response.statusCode === 204
            ? 'the service has no stream for this job (HTTP 204)'
            : `the stream is "${type || 'untyped'}", not text/event-stream`,
        );
      } else {
        error = await http.errorFromResponse(response, { operation, url, jobId: id });
      }
      if (terminalSeen) return { kind: 'terminal' };
      if (error instanceof AuthenticationError) throw error;
      if (isTransient(error)) {
        stall.restart();
        failures++;
        lastFailure = error;
        waitMs = delayAfter(error);
        if (failures === 1) yield { type: 'unreachable', message: error.message, retryInMs: waitMs };
        continue;
      }
      // 404/405/501, another 4xx, or not a stream: the service cannot stream this job; the status endpoint decides.
      return {
        kind: 'fallback',
        reason: `the event stream is not available (${error.status ? `HTTP ${error.status}` : error.message})`,
        error,
      };
    }

    state.history.startConnection();
    const idleMs = deps.stream.idleTimeoutMs;
    const reader = readEventStream(response.body as AsyncIterable<Uint8Array>, {
      idleTimeoutMs: idleMs,
      onIdle: () => connection.abort(idleError(id, idleMs)),
    });
    let fresh = 0;
    let grace: NodeJS.Timeout | undefined;
    if (terminalSeen)
      grace = setTimeout(
        () => connection.abort(new Error('terminal grace over')),
        Math.max(0, terminalDeadline - Date.now()),
      );
    try {
      yield {
        type: 'transport',
        mode: 'stream',
        reason:
          connections === 1
            ? 'connected'
            : `reconnected${state.history.lastEventId ? ` after event ${state.history.lastEventId}` : ''}`,
      };
      for (;;) {
        let next: IteratorResult<SseItem>;
        try {
          next = await reader.next();
        } catch (error) {
          if (scope.signal.aborted) throw scope.reason();
          // A stream cut between the terminal status and `end` is reconnected (Last-Event-ID) within the grace
          // period, so that the result event that follows the status is not lost.
          if (terminalSeen && Date.now() >= terminalDeadline) return { kind: 'terminal' };
          lastFailure = readFailure(error, http, url, scope, id);
          break;
        }
        if (next.done) {
          if (terminalSeen) return { kind: 'terminal' };
          lastFailure = streamEndedEarly(id);
          break;
        }
        const item = next.value;
        if (item.kind === 'retry') {
          retryHintMs = item.ms;
          continue;
        }
        if (item.kind === 'comment') {
          // A heartbeat proves the connection lives, not that the job moves; it resets nothing but the idle clock.
          if (yield* watch.checkIfDue()) return { kind: 'terminal' };
          continue;
        }
        if (!state.history.isNew(item)) continue;
        fresh++;
        const { events, terminal } = interpret(item, state, deps, id);
        // Only news of the job itself puts off the status check: a stream of log lines says nothing of its state.
        if (item.event !== 'log') watch.sawEvent();
        for (const event of events) yield event;
        if (terminal === 'end') return { kind: 'terminal' };
        if (item.event === 'log' && !terminalSeen && (yield* watch.checkIfDue())) return { kind: 'terminal' };
        if (terminal === 'status' && !terminalSeen) {
          // The spec's order is status, logs, result, end: the result usually follows the terminal status, so
          // read on until `end` or the close, for a short while; the status endpoint has the outputs either way.
          terminalSeen = true;
          terminalDeadline = Date.now() + TERMINAL_GRACE_MS;
          grace = setTimeout(() => connection.abort(new Error('terminal grace over')), TERMINAL_GRACE_MS);
        }
      }
    } finally {
      if (grace) clearTimeout(grace);
      await reader.return(undefined).catch(() => undefined);
      connection.abort();
    }
    // Only a connection that brought something new counts as working; one that only sent heartbeats or replays
    // counts as a failure, so a stream that keeps dropping ends in polling instead of reconnecting forever.
    failures = fresh > 0 ? 0 : failures + 1;
    deps.log(
      'debug',
      `job ${id}: the event stream dropped (${lastFailure?.message ?? 'closed'}); ${fresh} new events on that connection`,
    );
    waitMs = delayAfter(undefined);
  }
}

function readFailure(
  error: unknown,
  http: HttpClient,
  url: string,
  scope: OperationScope,
  id: string,
): ArticleAudioError {
  if (error instanceof TimeoutError) return error;
  if (error instanceof EventTooLargeError) {
    return new ConnectionError(
      `The event stream of job ${id} sent an event too large to read (${error.message}).`,
      true,
      { code: 'event_too_large' },
    );
  }
  return http.toClientError(error, { operation: `reading the event stream of job ${id}`, url }, scope);
}

function parseJsonData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** The events a stream message stands for, and whether it says the job is finished. */
function interpret(
  item: Extract<SseItem, { kind: 'event' }>,
  state: FollowState,
  deps: FollowDependencies,
  id: string,
): { events: JobEvent[]; terminal: 'status' | 'end' | false } {
  const eventId = resumableId(item.id);
  const withId = <T extends JobEvent>(event: T): T => (eventId ? { ...event, eventId } : event);
  switch (item.event) {
    case 'status': {
      const status = readStatusEvent(parseJsonData(item.data));
      if (!status) {
        deps.log('debug', `job ${id}: ignored a status event without a status`);
        return { events: [], terminal: false };
      }
      const event = state.statusEvent(status.status, status.progress, eventId);
      return { events: event ? [event] : [], terminal: isTerminalStatus(status.status) ? 'status' : false };
    }
    case 'log': {
      const json = parseJsonData(item.data);
      const log = readLogEvent(json);
      if (log) {
        const event = state.logEvent(log.level, log.message, eventId, log.createdAt);
        return { events: event ? [event] : [], terminal: false };
      }
      // A plain-text log line is still a log line.
      if (json === undefined && item.data.trim()) {
        const event = state.logEvent('info', item.data, eventId);
        return { events: event ? [event] : [], terminal: false };
      }
      deps.log('debug', `job ${id}: ignored a log event without a message`);
      return { events: [], terminal: false };
    }
    case 'result': {
      const json = parseJsonData(item.data);
      const result = readResultEvent(json, (reference) => deps.http.base.resolve(reference));
      if (!result) {
        deps.log('debug', `job ${id}: ignored a result event that is not a JSON object`);
        return { events: [], terminal: false };
      }
      if (result.results.length > 0 && !result.part) state.results = result.results;
      return { events: [withId({ type: 'result', ...result, raw: json })], terminal: false };
    }
    case 'end':
      return { events: [], terminal: 'end' };
    default:
      deps.log('debug', `job ${id}: ignored a stream event named ${JSON.stringify(item.event ?? 'message')}`);
      return { events: [], terminal: false };
  }
}
