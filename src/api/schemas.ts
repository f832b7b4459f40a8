// What the service sends, validated leniently at the boundary (spec 2.1-2.4): unknown fields pass, optional fields
// may be missing or of the wrong type (then they are dropped), and only what the client cannot work without (a job's
// status, an accepted job's id) makes an answer invalid. zod/mini keeps the extension bundle small.
import * as z from 'zod/mini';
import type { FieldIssue, Job, JobErrorDetails, JobPart, OutputFile } from './types';

const optionalString = z.catch(z.optional(z.string()), undefined);
const optionalNumber = z.catch(z.optional(z.number()), undefined);
const optionalArray = z.catch(z.optional(z.array(z.unknown())), undefined);

const envelopeSchema = z.looseObject({ data: z.optional(z.unknown()), errors: z.optional(z.unknown()) });

const acceptedSchema = z.looseObject({
  job_id: optionalString,
  id: optionalString,
  links: z.catch(z.optional(z.looseObject({ self: optionalString, stream: optionalString })), undefined),
});

const outputFileSchema = z.looseObject({ url: z.string(), content_type: optionalString, duration_s: optionalNumber });

const jobSchema = z.looseObject({
  id: optionalString,
  status: z.string(),
  progress: optionalNumber,
  created_at: optionalString,
  title: z.catch(z.optional(z.nullable(z.string())), undefined),
  outputs: z.catch(z.optional(z.nullable(z.looseObject({ results: optionalArray }))), undefined),
  error: z.optional(z.unknown()),
});

const statusEventSchema = z.looseObject({ status: z.string(), progress: optionalNumber });

const logEventSchema = z.looseObject({ level: optionalString, message: z.string(), created_at: optionalString });

const partSchema = z.looseObject({
  index: z.number().check(z.int(), z.nonnegative()),
  start_s: z.number().check(z.nonnegative()),
  duration_s: z.number().check(z.nonnegative()),
  url: z.string(),
  transcript_url: optionalString,
  final: z.catch(z.optional(z.boolean()), undefined),
});

const resultEventSchema = z.looseObject({
  part: z.catch(z.optional(partSchema), undefined),
  images: optionalArray,
  results: optionalArray,
  request_duration_s: optionalNumber,
  model_id: optionalString,
  style_id: optionalNumber,
});

const serviceErrorSchema = z.looseObject({
  code: z.catch(z.optional(z.union([z.string(), z.number()])), undefined),
  message: optionalString,
  detail: optionalString,
  field: optionalString,
  path: z.catch(z.optional(z.union([z.string(), z.array(z.union([z.string(), z.number()]))])), undefined),
});

export type UrlResolver = (reference: string) => string;

/** A JSON answer split into the envelope's parts. A bare object without `data` is taken as the payload itself. */
export function readEnvelope(json: unknown): { data: unknown; errors: unknown } {
  const parsed = envelopeSchema.safeParse(json);
  if (!parsed.success) return { data: undefined, errors: undefined };
  if (!('data' in parsed.data) && !('errors' in parsed.data)) return { data: json, errors: undefined };
  return { data: parsed.data.data, errors: parsed.data.errors };
}

/** The accepted job's id and links (2.2), or undefined when the payload names no job. */
export function readAccepted(data: unknown): { jobId: string; self?: string; stream?: string } | undefined {
  const parsed = acceptedSchema.safeParse(data);
  if (!parsed.success) return undefined;
  const jobId = parsed.data.job_id ?? parsed.data.id;
  if (!jobId) return undefined;
  return { jobId, self: parsed.data.links?.self, stream: parsed.data.links?.stream };
}

function clampProgress(value: number | undefined): number | undefined {
  if (value === undefined || !Number.isFinite(value)) return undefined;
  return Math.min(1, Math.max(0, value));
}

/** Output files with a usable `url`; elements without one are skipped rather than failing the whole job. */
export function readOutputFiles(results: unknown[] | undefined, resolve: UrlResolver): OutputFile[] {
  const files: OutputFile[] = [];
  for (const element of results ?? []) {
    const parsed = outputFileSchema.safeParse(element);
    if (!parsed.success || !parsed.data.url) continue;
    let url: string;
    try {
      url = resolve(parsed.data.url);
    } catch {
      continue;
    }
    const file: OutputFile = { url };
    if (parsed.data.content_type !== undefined) file.contentType = parsed.data.content_type;
    if (parsed.data.duration_s !== undefined) file.durationS = parsed.data.duration_s;
    files.push(file);
  }
  return files;
}

/** The job's `error` (structure not shown by the spec): a string, or an object with code and message, or anything. */
export function readJobError(error: unknown): JobErrorDetails | null {
  if (error === undefined || error === null) return null;
  if (typeof error === 'string') return { message: error, raw: error };
  if (typeof error === 'object' && !Array.isArray(error)) {
    const record = error as Record<string, unknown>;
    const details: JobErrorDetails = { raw: error };
    if (typeof record.code === 'string' || typeof record.code === 'number') details.code = String(record.code);
    const message = record.message ?? record.detail ?? record.description;
    if (typeof message === 'string') details.message = message;
    return details;
  }
  return { raw: error };
}

/**
 * A job from the status endpoint (2.3). Returns undefined when there is no status. `fallbackId` fills a missing id
 * (the processing response carries none).
 */
export function readJob(data: unknown, fallbackId: string, resolve: UrlResolver): Job | undefined {
  const parsed = jobSchema.safeParse(data);
  if (!parsed.success) return undefined;
  const value = parsed.data;
  const job: Job = {
    id: value.id || fallbackId,
    status: value.status,
    outputs: value.outputs ? { results: readOutputFiles(value.outputs.results, resolve) } : null,
    error: readJobError(value.error),
  };
  // The spec: progress "is 1.0 when the job has succeeded", so a succeeded job without it is complete.
  const progress = clampProgress(value.progress) ?? (value.status === 'succeeded' ? 1 : undefined);
  if (progress !== undefined) job.progress = progress;
  if (value.created_at !== undefined) job.createdAt = value.created_at;
  // A title from outside: one line, bounded (it is shown in lists and notifications).
  const title = value.title?.replace(/\s+/g, ' ').trim().slice(0, 300);
  if (title) job.title = title;
  return job;
}

export function readStatusEvent(data: unknown): { status: string; progress?: number } | undefined {
  const parsed = statusEventSchema.safeParse(data);
  if (!parsed.success) return undefined;
  const progress = clampProgress(parsed.data.progress);
  return progress === undefined ? { status: parsed.data.status } : { status: parsed.data.status, progress };
}

export function readLogEvent(data: unknown): { level: string; message: string; createdAt?: string } | undefined {
  const parsed = logEventSchema.safeParse(data);
  if (!parsed.success) return undefined;
  const event: { level: string; message: string; createdAt?: string } = {
    level: parsed.data.level ?? 'info',
    message: parsed.data.message,
  };
  if (parsed.data.created_at !== undefined) event.createdAt = parsed.data.created_at;
  return event;
}

export function readResultEvent(
  data: unknown,
  resolve: UrlResolver,
):
  | {
      part?: JobPart;
      results: OutputFile[];
      images: unknown[];
      modelId?: string;
      styleId?: number;
      requestDurationS?: number;
    }
  | undefined {
  const parsed = resultEventSchema.safeParse(data);
  if (!parsed.success) return undefined;
  const event: {
    part?: JobPart;
    results: OutputFile[];
    images: unknown[];
    modelId?: string;
    styleId?: number;
    requestDurationS?: number;
  } = {
    results: readOutputFiles(parsed.data.results, resolve),
    images: parsed.data.images ?? [],
  };
  const part = parsed.data.part;
  const resolved = (reference: string | undefined) => {
    try {
      return reference ? resolve(reference) : undefined;
    } catch {
      return undefined;
    }
  };
  const partUrl = resolved(part?.url);
  if (part && partUrl) {
    const transcriptUrl = resolved(part.transcript_url);
    event.part = {
      index: part.index,
      startS: part.start_s,
      durationS: part.duration_s,
      url: partUrl,
      final: part.final === true,
      ...(transcriptUrl ? { transcriptUrl } : {}),
    };
  }
  if (parsed.data.model_id !== undefined) event.modelId = parsed.data.model_id;
  if (parsed.data.style_id !== undefined) event.styleId = parsed.data.style_id;
  if (parsed.data.request_duration_s !== undefined) event.requestDurationS = parsed.data.request_duration_s;
  return event;
}

export interface ServiceErrorEntry {
  code?: string;
  message?: string;
  field?: string;
}

/**
 * The envelope's `errors` (format not shown by the spec): an array of `{code, message, field?}` (our engine), a single
 * such object, or a string. Field paths given as arrays (`["intro_audio_url"]`) are joined with dots.
 */
export function readServiceErrors(errors: unknown): ServiceErrorEntry[] {
  if (errors === undefined || errors === null) return [];
  if (typeof errors === 'string') return errors ? [{ message: errors }] : [];
  const list = Array.isArray(errors) ? errors : [errors];
  const entries: ServiceErrorEntry[] = [];
  for (const item of list.slice(0, 50)) {
    if (typeof item === 'string') {
      entries.push({ message: item });
      continue;
    }
    const parsed = serviceErrorSchema.safeParse(item);
    if (!parsed.success) continue;
    const entry: ServiceErrorEntry = {};
    if (parsed.data.code !== undefined) entry.code = String(parsed.data.code);
    const message = parsed.data.message ?? parsed.data.detail;
    if (message !== undefined) entry.message = message;
    const path = parsed.data.field ?? parsed.data.path;
    if (path !== undefined) entry.field = Array.isArray(path) ? path.join('.') : path;
    entries.push(entry);
  }
  return entries;
}

export function fieldIssuesFrom(entries: readonly ServiceErrorEntry[]): FieldIssue[] {
  return entries
    .filter((entry) => entry.field !== undefined)
    .map((entry) => ({ field: entry.field!, message: entry.message ?? entry.code ?? 'is invalid' }));
}
