// POST /v1/article-to-audio (spec 4.1, DESIGN.md): one zod schema that the client checks before it sends and the
// engine checks when it receives, so both give the same answer with the same words. Every bad field gets one issue
// whose `field` is its JSON path, so a client can point at what to fix.
import * as z from 'zod';
import { MODEL_IDS, type ModelId } from './models';
import { storableText, textProblem } from './text';
import { urlProblem } from './url';

/** The request as sent and as the engine keeps it: text trimmed, optional fields absent rather than empty. */
export interface ArticleSubmission {
  model_id: ModelId;
  url?: string;
  text?: string;
  intro_audio_url?: string;
  outro_audio_url?: string;
}

/** One problem with one field. `field` is its JSON path (`text`, `model_id`); empty for the body as a whole. */
export interface FieldIssue {
  field: string;
  /** What is wrong, naming the field: "model_id must be one of …" (another service may send "must be one of …"). */
  message: string;
}

export type SubmissionCheck = { ok: true; submission: ArticleSubmission } | { ok: false; issues: FieldIssue[] };

const URL_FIELDS = ['url', 'intro_audio_url', 'outro_audio_url'] as const;
const FIELDS = ['model_id', 'text', ...URL_FIELDS] as const;

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

const httpUrl = z.unknown().superRefine((value, context) => {
  const problem = typeof value === 'string' ? urlProblem(value) : `must be a URL string (got ${typeName(value)})`;
  if (problem) context.addIssue({ code: 'custom', message: problem });
});

export const articleSubmissionSchema = z
  .record(z.string(), z.unknown(), {
    error: (issue) => `the request must be an object with model_id and url or text (got ${typeName(issue.input)})`,
  })
  .superRefine((body, context) => {
    const issue = (field: string, problem: string) =>
      context.addIssue({
        code: 'custom',
        path: field ? [field] : [],
        message: field ? `${field} ${problem}` : problem,
      });
    const present = (field: string) => body[field] !== undefined;

    if (!present('model_id')) issue('model_id', `is required: one of ${MODEL_IDS.join(', ')}`);
    else if (!(MODEL_IDS as readonly unknown[]).includes(body.model_id))
      issue('model_id', `must be one of ${MODEL_IDS.join(', ')} (got ${quote(body.model_id)})`);

    const hasUrl = present('url');
    const hasText = present('text');
    if (!hasUrl && !hasText) issue('text', 'is required unless url is given: give exactly one of url and text');
    else if (hasUrl && hasText) issue('url', 'cannot be given together with text: give exactly one of url and text');

    if (hasText) {
      const problem =
        typeof body.text === 'string' ? textProblem(body.text) : `must be a string (got ${typeName(body.text)})`;
      if (problem) issue('text', problem);
    }
    for (const field of URL_FIELDS) {
      if (!present(field)) continue;
      const result = httpUrl.safeParse(body[field]);
      if (!result.success) issue(field, result.error.issues[0]!.message);
    }
    for (const field of Object.keys(body)) {
      if (!(FIELDS as readonly string[]).includes(field) && body[field] !== undefined) {
        issue(field, `is not a field of an article request (expected ${FIELDS.join(', ')})`);
      }
    }
  })
  .transform((body): ArticleSubmission => {
    const submission: ArticleSubmission = { model_id: body.model_id as ModelId };
    if (typeof body.url === 'string') submission.url = body.url;
    if (typeof body.text === 'string') submission.text = storableText(body.text).trim();
    if (typeof body.intro_audio_url === 'string') submission.intro_audio_url = body.intro_audio_url;
    if (typeof body.outro_audio_url === 'string') submission.outro_audio_url = body.outro_audio_url;
    return submission;
  });

/** Checks a request body: the submission to keep, or every problem, one per field. */
export function checkSubmission(body: unknown): SubmissionCheck {
  const parsed = articleSubmissionSchema.safeParse(body);
  if (parsed.success) return { ok: true, submission: parsed.data };
  const issues = new Map<string, FieldIssue>();
  for (const issue of parsed.error.issues) {
    const field = issue.path.map(String).join('.');
    if (!issues.has(field)) issues.set(field, { field, message: issue.message });
  }
  return { ok: false, issues: [...issues.values()] };
}

/** "model_id must be …; text must be …"; a message that does not name its field gets it in front ("voice: …"). */
export function describeIssues(issues: readonly FieldIssue[]): string {
  return issues
    .map((issue) =>
      !issue.field || issue.message.startsWith(`${issue.field} `) ? issue.message : `${issue.field}: ${issue.message}`,
    )
    .join('; ');
}
