// The job object of GET /v1/jobs/<id> (spec 2.3): every field in every state, plus a few additive ones.
import type { JobHandle } from '../core/service-api';
import { outputLinks, withAbsoluteUrls } from '../core/stream-events';

export function jobView(job: JobHandle, baseUrl: string): Record<string, unknown> {
  const record = job.record;
  const links = outputLinks(record);
  return {
    id: record.id,
    status: record.status,
    created_at: record.createdAt,
    progress: record.status === 'succeeded' ? 1 : job.progress,
    outputs: links ? { results: withAbsoluteUrls(links, baseUrl) } : null,
    error: record.status === 'failed' ? record.error : null,
    model_id: record.request.model_id,
    finished_at: record.finishedAt ?? null,
    title: record.result?.title ?? null,
    duration_s: record.result?.durationS ?? null,
    language: record.result?.language ?? null,
  };
}
