// Validation of POST /v1/article-to-audio bodies: the spec's constraints plus DESIGN.md's (exactly one of url and
// text, text 50..100000 characters after trimming, http(s) URLs only, no unknown fields). Every bad field gets one
// entry whose `field` is its JSON path, so a client can point at what to fix.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { MODEL_IDS, TEXT_MAX_LENGTH, TEXT_MIN_LENGTH } from '../api/types';
import type { EngineModelId } from './pipeline/types';

/** The request as the engine keeps it: text trimmed, optional fields absent rather than empty. */
export interface ArticleSubmission {
  model_id: EngineModelId;
  url?: string;
  text?: string;
  intro_audio_url?: string;
  outro_audio_url?: string;
}

export interface FieldProblem {
  field?: string;
  message: string;
}

export type SubmissionCheck = { ok: true; submission: ArticleSubmission } | { ok: false; problems: FieldProblem[] };

const MAX_URL_LENGTH = 2048;

function httpUrl(what: string) {
  return z.string({ error: `${what} must be a string.` }).superRefine((value, context) => {
    const problem = urlProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: `${what} ${problem}` });
  });
}

function urlProblem(value: string): string | undefined {
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters.`;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return 'must be a valid absolute URL, such as https://example.com/article.';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http:// or https:// URL.';
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain a user name or password.';
  return undefined;
}

const submissionSchema = z.strictObject(
  {
    model_id: z.enum(MODEL_IDS, { error: `model_id must be one of ${MODEL_IDS.join(', ')}.` }),
    url: httpUrl('url').optional(),
    text: z
      .string({ error: 'text must be a string.' })
      .superRefine((value, context) => {
        const length = countCharacters(value.trim());
        if (length < TEXT_MIN_LENGTH || length > TEXT_MAX_LENGTH) {
          context.addIssue({
            code: 'custom',
            message: `text must be ${TEXT_MIN_LENGTH} to ${TEXT_MAX_LENGTH} characters after trimming; it has ${length}.`,
          });
          return;
        }
        // Text of NULs or zero-width characters passes the length check but has nothing to read: refused here,
        // not accepted and failed later.
        const readable = readableCharacters(value);
        if (readable < TEXT_MIN_LENGTH) {
          context.addIssue({
            code: 'custom',
            message: `text must have at least ${TEXT_MIN_LENGTH} readable characters; it has ${readable} (control characters such as NUL and invisible ones such as zero-width spaces do not count).`,
          });
        }
      })
      .optional(),
    intro_audio_url: httpUrl('intro_audio_url').optional(),
    outro_audio_url: httpUrl('outro_audio_url').optional(),
  },
  { error: 'The body must be a JSON object.' },
);

export function checkSubmission(body: unknown): SubmissionCheck {
  const problems = new Map<string, FieldProblem>();
  const add = (problem: FieldProblem) => {
    const key = problem.field ?? '';
    if (!problems.has(key)) problems.set(key, problem);
  };

  const parsed = submissionSchema.safeParse(body);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) add({ field: jsonPath([...issue.path, key]), message: `${key} is not a field of this request.` });
      } else if (issue.path.length === 0) {
        add({ message: issue.message });
      } else if (issue.path.length === 1 && isPlainObject(body) && body[String(issue.path[0])] === undefined) {
        add({ field: jsonPath(issue.path), message: `${jsonPath(issue.path)} is required.` });
      } else {
        add({ field: jsonPath(issue.path), message: issue.message });
      }
    }
  }

  // Exactly one of url and text: checked on the raw object, so it is reported together with the other problems
  // (on the fields the client library names too: text when neither is given, url when both are).
  if (isPlainObject(body) && !problems.has('url') && !problems.has('text')) {
    const hasUrl = body.url !== undefined;
    const hasText = body.text !== undefined;
    if (hasUrl && hasText) add({ field: 'url', message: 'Give the article as url or as text, not both.' });
    if (!hasUrl && !hasText) add({ field: 'text', message: 'Give the article: either url (a web page) or text (50 to 100000 characters).' });
  }

  if (problems.size > 0 || !parsed.success) return { ok: false, problems: [...problems.values()] };
  const { model_id, url, text, intro_audio_url, outro_audio_url } = parsed.data;
  return {
    ok: true,
    submission: {
      model_id,
      ...(url !== undefined ? { url } : {}),
      ...(text !== undefined ? { text: text.trim() } : {}),
      ...(intro_audio_url !== undefined ? { intro_audio_url } : {}),
      ...(outro_audio_url !== undefined ? { outro_audio_url } : {}),
    },
  };
}

/** A stable digest of a submission, to tell an idempotent repeat from a different request under the same key. */
export function submissionDigest(submission: ArticleSubmission): string {
  const ordered = Object.fromEntries(Object.entries(submission).sort(([a], [b]) => (a < b ? -1 : 1)));
  return createHash('sha256').update(JSON.stringify(ordered)).digest('hex');
}

/** Characters as people count them: code points, so an emoji is one character (as the client library counts). */
export function countCharacters(text: string): number {
  let surrogatePairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        surrogatePairs++;
        i++;
      }
    }
  }
  return text.length - surrogatePairs;
}

/** Control characters other than tab and line breaks, and format characters (zero-width spaces and joiners, BOM, direction marks). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this matches
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\p{Cf}]/gu;

/** Characters that can be read: code points left once invisible ones are removed and the rest is trimmed. */
export function readableCharacters(text: string): number {
  return countCharacters(text.replace(INVISIBLE, '').trim());
}

function jsonPath(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
