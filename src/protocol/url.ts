// Which addresses a job may name (the article, intro and outro audio): absolute http(s) URLs with a host, no spaces
// or control characters, no user name or password (a credential in a URL ends up in logs), at most 2048 characters.

export const URL_MAX_LENGTH = 2048;

function quote(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
}

/** Why `value` is not a URL a job may name (a sentence fragment after the field's name), or undefined. */
export function urlProblem(value: string): string | undefined {
  if (value.trim() === '') return 'must not be empty';
  if (value.length > URL_MAX_LENGTH)
    return `must be at most ${URL_MAX_LENGTH} characters long (it has ${value.length})`;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this matches
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
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain a user name or password';
  return undefined;
}

export function isHttpUrl(value: string): boolean {
  return urlProblem(value) === undefined;
}
