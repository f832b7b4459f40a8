// Submissions as the engine receives them: the rules are the wire contract's (src/protocol, shared with the client,
// so both give the same answer in the same words); the engine adds the digest that tells an idempotent repeat from
// a different request under the same key.
import { createHash } from 'node:crypto';
import type { ArticleSubmission } from '../../protocol';
import { modelById } from '../../protocol';
import type { PipelineInput, PipelineOutput } from '../../speech/types';
import type { JobResultInfo, StoredJob } from './job-store';

export { type ArticleSubmission, type FieldIssue, type SubmissionCheck, checkSubmission } from '../../protocol';

/** A stable digest of a submission, to tell an idempotent repeat from a different request under the same key. */
export function submissionDigest(submission: ArticleSubmission): string {
  const ordered = Object.fromEntries(Object.entries(submission).sort(([a], [b]) => (a < b ? -1 : 1)));
  return createHash('sha256').update(JSON.stringify(ordered)).digest('hex');
}

/** What the pipeline gets for one run of a stored submission (embedded worker loop and team worker alike). */
export function pipelineInputOf(jobId: string, request: ArticleSubmission): PipelineInput {
  return {
    jobId,
    modelId: request.model_id,
    ...(request.url !== undefined ? { url: request.url } : {}),
    ...(request.text !== undefined ? { text: request.text } : {}),
    ...(request.intro_audio_url !== undefined ? { introAudioUrl: request.intro_audio_url } : {}),
    ...(request.outro_audio_url !== undefined ? { outroAudioUrl: request.outro_audio_url } : {}),
  };
}

/** What a finished run records of itself (embedded worker loop and team worker alike), the job ending at `finishedAtMs`. */
export function jobResultOf(
  job: Pick<StoredJob, 'request' | 'createdAt'>,
  output: PipelineOutput,
  finishedAtMs: number,
): JobResultInfo {
  return {
    ...(output.title ? { title: output.title } : {}),
    durationS: output.durationS,
    ...(output.language ? { language: output.language } : {}),
    styleId: modelById(job.request.model_id).styleId,
    requestDurationS: Math.round((finishedAtMs - Date.parse(job.createdAt)) / 10) / 100,
  };
}
