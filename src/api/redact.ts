// Keeps credentials out of everything the client writes: error messages, log lines, stacks. Every string the client
// builds from a server's answer or a caught error passes through a Redactor before it reaches a person.

const MASK = '[redacted]';

/**
 * Whether the value after "token:" or "Bearer" looks like a credential rather than a word of a sentence ("send",
 * "authentication") or a placeholder ("<token>"): real keys carry digits or symbols, or are long.
 */
function credentialShaped(value: string): boolean {
  if (/^<[^>]*>?$/.test(value)) return false;
  return !(/^[A-Za-z][a-z]*[.!?:]?$/.test(value) && value.length < 24);
}

const mask = (all: string, name: string, separator: string, value: string) =>
  credentialShaped(value) ? `${name}${separator}${MASK}` : all;

/** Credentials that travel in well-known shapes, whoever's they are. */
const PATTERNS: [RegExp, string | typeof mask][] = [
  // `Bearer abc…` (RFC 6750 token characters, at least 8 so that "bearer of bad news" stays; a sentence's closing
  // period or bracket is not part of the token) and `Basic dXNlcjpw…`.
  [/\b(bearer)(\s+)((?=[A-Za-z0-9\-._~+/]{8})[A-Za-z0-9\-._~+/]*[A-Za-z0-9\-_~+/]=*)/gi, mask],
  [/\b(Basic)(\s+)([A-Za-z0-9+/]{8,}={0,2})/g, mask],
  // `authorization: abc`, `"Authorization":"abc"`, `api_key=abc`, `x-api-key: abc`, `token=abc`; not `token: send`.
  [
    /\b(authorization|proxy-authorization|x-api-key|api[_-]?key|access[_-]?token|token)(["']?\s*[:=]\s*["']?)(?!\[redacted\])(?!bearer\b|basic\b)([^\s"',;&)\]}>]+)/gi,
    mask,
  ],
  // User information in URLs: `https://user:password@host`.
  [/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s@"']+@/gi, `$1${MASK}@`],
];

const MAX_SECRETS = 16;

/** Replaces known secrets, and anything shaped like a credential, in text. */
export class Redactor {
  private readonly secrets: string[] = [];

  /** Remembers a secret (an API key) so that it is masked wherever it appears. Keeps the last few. */
  add(secret: string | undefined): void {
    if (!secret) return;
    for (const value of new Set([secret, secret.trim()])) {
      if (!value || this.secrets.includes(value)) continue;
      this.secrets.push(value);
      if (this.secrets.length > MAX_SECRETS) this.secrets.shift();
    }
    // Longest first, so that a key containing another is masked whole.
    this.secrets.sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    return redact(text, this.secrets);
  }

  /**
   * Masks only the known secrets, not credential-shaped text: for content that is not the client's own (a job's log
   * lines), where "Bearer of bad news" must stay as written.
   */
  redactSecrets(text: string): string {
    let out = text;
    for (const secret of this.secrets) if (secret) out = out.split(secret).join(MASK);
    return out;
  }

  /** A copy of a JSON-like value with the known secrets masked in every string (for raw payloads of the service). */
  redactSecretsIn<T>(value: T): T {
    if (value === undefined || value === null || this.secrets.length === 0) return value;
    try {
      const text = JSON.stringify(value);
      const masked = this.redactSecrets(text);
      return masked === text ? value : (JSON.parse(masked) as T);
    } catch {
      return undefined as T;
    }
  }
}

/** Masks the given secrets, bearer tokens, authorization headers and URL credentials in `text`. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = String(text);
  for (const secret of secrets) {
    if (secret) out = out.split(secret).join(MASK);
  }
  for (const [pattern, replacement] of PATTERNS) {
    out = typeof replacement === 'string' ? out.replace(pattern, replacement) : out.replace(pattern, replacement);
  }
  return out;
}
