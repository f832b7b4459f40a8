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
import {
  ArticleAudioError,
  AuthenticationError,
  ConnectionError,
  RateLimitError,
  ServerError,
  TimeoutError,
  formatDuration,
} from './errors';
import { type FollowDependencies, FollowState, StallClock, resumableId } from './follow-state';
import { type HttpClient, discard } from './http';
import { readLogEvent, readResultEvent, readStatusEvent } from './schemas';
import { EventTooLargeError, readEventStream, type SseItem } from './sse';
import { OperationScope, PollingSchedule, backoffDelay } from './timing';
import { isTerminalStatus, type FollowOptions, type Job, type JobEvent, type StreamOptions } from './types';

export type { FollowDependencies } from './follow-state';

export const DEFAULT_STREAM: Required<StreamOptions> = {
  idleTimeoutMs: 45_000,
  maxFailures: 5,
  reconnectMs: 1000,
  statusCheckMs: 60_000,
};
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
