// The payloads of the job stream's events (spec 2.4 and DESIGN.md). Output addresses are stored relative to the
// service's base URL and made absolute when sent, because the engine's address changes between starts (the
// extension picks a free port each time) while a job's history is kept.
import type { PipelineLogLevel } from '../../speech/types';
import { formatSeconds } from './job-errors';
import type { NewEvent } from './live-job';
import type { JobFailure, JobState, StoredJob, StoredOutput } from './job-store';
import type { ArticleSubmission } from './submission';

export interface OutputLink {
  url: string;
  content_type: string;
  duration_s?: number;
}

export function outputLinks(job: StoredJob): OutputLink[] | null {
  if (job.status !== 'succeeded' || !job.outputs) return null;
  return job.outputs.map((o) => ({
    url: `/v1/jobs/${job.id}/outputs/${o.name}`,
    content_type: o.contentType,
    ...(o.durationS !== undefined ? { duration_s: o.durationS } : {}),
  }));
}

export function statusEvent(
  status: JobState,
  progress: number,
  output: OutputLink[] | null,
  error?: JobFailure | null,
): NewEvent {
  return {
    event: 'status',
    data: { status, output: output ? { results: output } : null, progress, ...(error ? { error } : {}) },
  };
}

export function logEvent(level: PipelineLogLevel, message: string): NewEvent {
  return { event: 'log', data: { level, message, created_at: new Date().toISOString() } };
}

export function resultEvent(job: StoredJob): NewEvent {
  return {
    event: 'result',
    data: {
      images: [],
      request_duration_s: job.result?.requestDurationS ?? 0,
      model_id: job.request.model_id,
      style_id: job.result?.styleId ?? 0,
      results: outputLinks(job) ?? [],
    },
  };
}

/** Where a part of a job's audio is, as the `part` field of its result event (ARCHITECTURE.md, "Audio in parts"). */
export interface PartLink {
  index: number;
  start_s: number;
  duration_s: number;
  url: string;
  transcript_url: string;
  final: boolean;
}

export function partUrl(jobId: string, name: string): string {
  return `/v1/jobs/${jobId}/parts/${name}`;
}

/** A part of the audio is ready while the job runs: the spec's result fields, plus `part` and its `results`. */
export function partResultEvent(
  job: StoredJob,
  styleId: number,
  part: Omit<PartLink, 'url' | 'transcript_url'>,
  files: readonly StoredOutput[],
): NewEvent {
  const [audio, transcript] = files;
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return {
    event: 'result',
    data: {
      images: [],
      request_duration_s: Math.round((Date.now() - Date.parse(job.createdAt)) / 10) / 100,
      model_id: job.request.model_id,
      style_id: styleId,
      part: {
        index: part.index,
        start_s: round(part.start_s),
        duration_s: round(part.duration_s),
        url: audio ? partUrl(job.id, audio.name) : '',
        transcript_url: transcript ? partUrl(job.id, transcript.name) : '',
        final: part.final,
      },
      results: files.map((f) => ({
        url: partUrl(job.id, f.name),
        content_type: f.contentType,
        ...(f.durationS !== undefined ? { duration_s: round(f.durationS) } : {}),
      })),
    },
  };
}

export function endEvent(status: 'succeeded' | 'failed'): NewEvent {
  return { event: 'end', data: status };
}

/** The events that close a finished job's stream, in the spec's order: status, log, result, end. */
export function closingEvents(job: StoredJob, message: string): NewEvent[] {
  if (job.status === 'succeeded') {
    return [
      statusEvent('succeeded', 1, outputLinks(job)),
      logEvent('info', message),
      resultEvent(job),
      endEvent('succeeded'),
    ];
  }
  return [statusEvent('failed', job.progress, null, job.error), logEvent('error', message), endEvent('failed')];
}

/** The closing events of a job that has just finished, with the line that says how: done (how long), or failed (why). */
export function finishedEvents(job: StoredJob): NewEvent[] {
  const message =
    job.status === 'succeeded'
      ? `Done: ${formatSeconds(job.result?.durationS ?? 0)} of audio.`
      : `Failed (${job.error?.code ?? 'unknown'}): ${job.error?.message ?? ''}`;
  return closingEvents(job, message);
}

/** Turns the relative output addresses inside a stored payload into absolute ones. */
export function withAbsoluteUrls(data: unknown, baseUrl: string): unknown {
  if (Array.isArray(data)) return data.map((item) => withAbsoluteUrls(item, baseUrl));
  if (typeof data !== 'object' || data === null) return data;
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [
      key,
      (key === 'url' || key.endsWith('_url')) && typeof value === 'string' && value.startsWith('/')
        ? baseUrl + value
        : withAbsoluteUrls(value, baseUrl),
    ]),
  );
}

/** The first events of every accepted job: queued, and what was accepted. */
export function acceptedEvents(request: ArticleSubmission): NewEvent[] {
  const source =
    request.url !== undefined ? `the page ${request.url}` : `${request.text?.length ?? 0} characters of text`;
  return [statusEvent('queued', 0, null), logEvent('info', `Accepted: ${source}, model ${request.model_id}.`)];
}

const MAX_LOG_MESSAGE = 2000;
const MAX_LOG_EVENTS_PER_RUN = 1000;
const LOG_LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'];

/**
 * The log events of one run of a pipeline: each message cut to a sane length, an unknown level read as info, and at
 * most MAX_LOG_EVENTS_PER_RUN of them (then one line saying the rest are left out, then nothing).
 */
export function runLog(emit: (event: NewEvent) => void): (level: PipelineLogLevel, message: string) => void {
  let logs = 0;
  return (level, message) => {
    logs++;
    if (logs > MAX_LOG_EVENTS_PER_RUN + 1) return;
    const text =
      logs > MAX_LOG_EVENTS_PER_RUN
        ? 'Further log lines of this run are left out.'
        : String(message).slice(0, MAX_LOG_MESSAGE);
    emit(logEvent(LOG_LEVELS.includes(level) ? level : 'info', text));
  };
}
