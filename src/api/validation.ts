// Checks an article request before it is sent, with one message per bad field, in the words of the spec (4.1, 8).
import { MODEL_IDS, TEXT_MAX_LENGTH, TEXT_MIN_LENGTH, type ArticleRequest, type FieldIssue } from './types';

const URL_FIELDS = ['url', 'intro_audio_url', 'outro_audio_url'] as const;
const KNOWN_FIELDS = new Set<string>(['model_id', 'text', ...URL_FIELDS]);

/** Characters as people count them (code points), so an emoji is one character, not two UTF-16 units. */
export function countCharacters(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // A high surrogate followed by a low surrogate is one character.
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Why `value` is not an http(s) URL, or undefined when it is one. */
export function urlProblem(value: string): string | undefined {
  if (value.trim() === '') return 'must not be empty';
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(value)) return `must be a URL without spaces or line breaks (got ${quote(value)})`;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return `must be a valid absolute URL such as https://example.com/article (got ${quote(value)})`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `must be an http:// or https:// URL (got ${quote(parsed.protocol.replace(/:$/, ''))})`;
  }
  if (!parsed.hostname) return `must name a host (got ${quote(value)})`;
  return undefined;
}

/**
 * Every problem with an article request, one issue per field (empty when the request is valid). Absent optional
 * fields may be `undefined` or `null`.
 */
export function validateArticleRequest(request: unknown): FieldIssue[] {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    return [{ field: '', message: `the request must be an object with model_id and url or text (got ${typeName(request)})` }];
  }
  const body = request as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  const present = (field: string) => body[field] !== undefined && body[field] !== null;

  const model = body.model_id;
  if (!present('model_id')) {
    issues.push({ field: 'model_id', message: `is required: one of ${MODEL_IDS.join(', ')}` });
  } else if (typeof model !== 'string' || !(MODEL_IDS as readonly string[]).includes(model)) {
    issues.push({ field: 'model_id', message: `must be one of ${MODEL_IDS.join(', ')} (got ${quote(model)})` });
  }

  const hasUrl = present('url');
  const hasText = present('text');
  if (!hasUrl && !hasText) {
    issues.push({ field: 'text', message: 'is required unless url is given: give exactly one of url and text' });
  } else if (hasUrl && hasText) {
    issues.push({ field: 'url', message: 'cannot be given together with text: give exactly one of url and text' });
  }

  if (hasText) {
    const text = body.text;
    if (typeof text !== 'string') {
      issues.push({ field: 'text', message: `must be a string (got ${typeName(text)})` });
    } else {
      const length = countCharacters(text.trim());
      if (length < TEXT_MIN_LENGTH || length > TEXT_MAX_LENGTH) {
        issues.push({
          field: 'text',
          message: `must be ${TEXT_MIN_LENGTH} to ${TEXT_MAX_LENGTH} characters long, not counting spaces at either end (it has ${length})`,
        });
      }
    }
  }

  for (const field of URL_FIELDS) {
    if (!present(field)) continue;
    const value = body[field];
    const problem = typeof value === 'string' ? urlProblem(value) : `must be a URL string (got ${typeName(value)})`;
    if (problem) issues.push({ field, message: problem });
  }

  for (const field of Object.keys(body)) {
    if (!KNOWN_FIELDS.has(field) && body[field] !== undefined) {
      issues.push({ field, message: `is not a field of an article request (expected ${[...KNOWN_FIELDS].join(', ')})` });
    }
  }
  return issues;
}

/** The JSON body to send: the documented fields that are set, nothing else. */
export function articleRequestBody(request: ArticleRequest): Record<string, string> {
  const body: Record<string, string> = { model_id: request.model_id };
  for (const field of ['url', 'text', 'intro_audio_url', 'outro_audio_url'] as const) {
    const value = request[field];
    if (value !== undefined && value !== null) body[field] = value;
  }
  return body;
}

/** "model_id: must be …; text: must be …" */
export function describeIssues(issues: readonly FieldIssue[]): string {
  return issues.map((issue) => (issue.field ? `${issue.field}: ${issue.message}` : issue.message)).join('; ');
}
