// The service's base address and everything resolved against it. The spec's paths (and its "relative links") are
// relative to the base address, which may carry a path prefix (https://host/audio), so "/v1/jobs/1" from the service
// means https://host/audio/v1/jobs/1, not https://host/v1/jobs/1.
import { ValidationError } from './errors';

export class ServiceBase {
  /** Origin plus path prefix, without a trailing slash: "https://host/audio". */
  readonly href: string;
  readonly origin: string;
  private readonly prefix: string;

  constructor(baseUrl: string) {
    let parsed: URL;
    try {
      parsed = new URL(baseUrl.trim());
    } catch {
      throw invalidBase(baseUrl, 'is not a valid URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw invalidBase(baseUrl, 'must start with http:// or https://');
    if (parsed.username || parsed.password)
      throw invalidBase('(hidden)', 'must not contain a user name or password; use the API key');
    this.origin = parsed.origin;
    this.prefix = parsed.pathname.replace(/\/+$/, '');
    this.href = this.origin + this.prefix;
  }

  /** The absolute URL of one of the spec's paths ("/v1/jobs/42"). */
  endpoint(path: string): string {
    return this.href + path;
  }

  jobUrl(jobId: string, suffix = ''): string {
    return this.endpoint(`/v1/jobs/${encodeURIComponent(jobId)}${suffix}`);
  }

  /** An address the service sent (a link or an output URL): absolute as is, else relative to the base address. */
  resolve(reference: string): string {
    const trimmed = reference.trim();
    if (/^[a-z][a-z0-9+.-]*:/i.test(trimmed)) return new URL(trimmed).href;
    if (trimmed.startsWith('//')) return new URL(trimmed, this.origin).href;
    if (trimmed.startsWith('/')) {
      // A service behind a prefix may send its links with the prefix already in them.
      const path =
        this.prefix && (trimmed === this.prefix || trimmed.startsWith(`${this.prefix}/`))
          ? trimmed
          : this.prefix + trimmed;
      return new URL(path, this.origin).href;
    }
    return new URL(trimmed, `${this.href}/`).href;
  }

  /** Whether a URL is on the service's own origin, the only place the API key may be sent. */
  isOwnOrigin(url: string | URL): boolean {
    try {
      return new URL(url).origin === this.origin;
    } catch {
      return false;
    }
  }
}

function invalidBase(value: string, problem: string): ValidationError {
  return new ValidationError(
    `The job service address ${JSON.stringify(value)} ${problem}.`,
    [{ field: 'baseUrl', message: problem }],
    { code: 'invalid_base_url' },
  );
}

/** A URL for messages: no query string (signed links carry secrets there) and no user information. */
export function describeUrl(url: string | URL): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(an invalid URL)';
  }
}
