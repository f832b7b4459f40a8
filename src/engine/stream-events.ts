// The payloads of the job stream's events (spec 2.4 and DESIGN.md). Output addresses are stored relative to the
// service's base URL and made absolute when sent, because the engine's address changes between starts (the
// extension picks a free port each time) while a job's history is kept.
import type { PipelineLogLevel } from './pipeline/types';
import type { NewEvent } from './live-job';
import type { JobFailure, JobState, StoredJob } from './store/types';

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

export function statusEvent(status: JobState, progress: number, output: OutputLink[] | null, error?: JobFailure | null): NewEvent {
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

export function endEvent(status: 'succeeded' | 'failed'): NewEvent {
  return { event: 'end', data: status };
}

/** The events that close a finished job's stream, in the spec's order: status, log, result, end. */
export function closingEvents(job: StoredJob, message: string): NewEvent[] {
  if (job.status === 'succeeded') {
    return [statusEvent('succeeded', 1, outputLinks(job)), logEvent('info', message), resultEvent(job), endEvent('succeeded')];
  }
  return [statusEvent('failed', job.progress, null, job.error), logEvent('error', message), endEvent('failed')];
}

/** Turns the relative output addresses inside a stored payload into absolute ones. */
export function withAbsoluteUrls(data: unknown, baseUrl: string): unknown {
  if (Array.isArray(data)) return data.map((item) => withAbsoluteUrls(item, baseUrl));
  if (typeof data !== 'object' || data === null) return data;
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [
      key,
      key === 'url' && typeof value === 'string' && value.startsWith('/') ? baseUrl + value : withAbsoluteUrls(value, baseUrl),
    ]),
  );
}
