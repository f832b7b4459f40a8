// What to do about an error from the client (src/api). src/api states facts only: what happened, the status, which
// host. The advice is added here, once, for the extension (notify.ts, which also picks the buttons) and the command
// line (src/cli/convert.ts). Plain TypeScript: no vscode, so both sides and plain-Node tests read the same words.
import {
  ArticleAudioError,
  AuthenticationError,
  ConnectionError,
  InvalidResponseError,
  JobFailedError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
  formatDuration,
  isCertificateProblem,
} from './api/index';

/** The buttons that fit, by name; notify.ts turns them into commands. */
export type FixKind = 'setKey' | 'useLocal' | 'useRemote';

export interface Advice {
  /** One or two sentences of what to do; empty when the message says all there is. */
  advice: string;
  fixes: FixKind[];
  /** Trying the same again may work (the network, a busy service). */
  passing: boolean;
}

export function adviceFor(error: unknown): Advice {
  const code = error instanceof ArticleAudioError ? error.code : undefined;
  if (error instanceof AuthenticationError) {
    const advice =
      code === 'missing_api_key'
        ? 'Set an API key and try again.'
        : code === 'malformed_api_key'
          ? 'Set the API key again, pasting only the key.'
          : code === 'api_key_unavailable'
            ? 'Set the API key again.'
            : error.status === 403
              ? 'Check that the key may use this service, or set another one with "Set API Key".'
              : 'Set the right key with "Set API Key".';
    return { advice, fixes: ['setKey'], passing: false };
  }
  if (error instanceof RateLimitError) {
    const advice =
      error.retryAfterMs !== undefined
        ? `Try again in ${formatDuration(error.retryAfterMs)}.`
        : 'Wait a little and try again.';
    return { advice, fixes: [], passing: true };
  }
  if (error instanceof ServerError) {
    const when = error.retryAfterMs !== undefined ? `in ${formatDuration(error.retryAfterMs)}` : 'in a moment';
    return { advice: `Try again ${when}; if it keeps failing, the service may be down.`, fixes: [], passing: true };
  }
  if (error instanceof TimeoutError) {
    const advice =
      code === 'download_too_slow'
        ? 'Try again on a faster network; if it keeps happening, the service or the host of the file is holding the download back.'
        : error.kind === 'deadline'
          ? 'Nothing was lost on the service; try again later or allow more time.'
          : 'Try again; if it keeps happening, the service may be overloaded or the network slow.';
    return { advice, fixes: ['useLocal'], passing: true };
  }
  if (error instanceof ConnectionError) {
    const advice = isCertificateProblem(code)
      ? "Check the service's certificate, or the proxy's if you use one."
      : /proxy/i.test(error.message)
        ? 'Check the proxy settings.'
        : code === 'resume_refused' || code === 'incomplete_download' || code === 'bad_range'
          ? 'Try again.'
          : 'Check the service address, that the service is running, and your network or proxy settings.';
    return { advice, fixes: ['useLocal'], passing: true };
  }
  if (error instanceof NotFoundError) {
    // At submission a 404 means the address is not a job service (or not its root); for a job, that the job is gone.
    return /does not know job/.test(error.message)
      ? {
          advice: 'It may have expired or belong to another API key; submit the article again.',
          fixes: [],
          passing: false,
        }
      : { advice: 'Check the service address.', fixes: ['useRemote', 'useLocal'], passing: false };
  }
  if (error instanceof ValidationError) {
    const advice =
      code === 'invalid_base_url'
        ? 'Set an address such as https://audio.example.com.'
        : code === 'invalid_idempotency_key'
          ? 'Use another key.'
          : error.status === 413
            ? 'Shorten the text and submit again.'
            : error.fields.length > 0
              ? `Correct ${error.fields.length === 1 ? 'this field' : 'these fields'} and submit again.`
              : 'Check the request and submit again.';
    return { advice, fixes: [], passing: false };
  }
  if (error instanceof InvalidResponseError && code === 'download_too_large') {
    return {
      advice:
        'The service, or the host its file address names, sends more than a file of this kind can hold: report it to whoever runs the service, or use the local engine.',
      fixes: ['useLocal'],
      passing: false,
    };
  }
  if (error instanceof InvalidResponseError && code === 'unsupported_url') {
    return {
      advice: 'The service sent an address that is not a web address: report it to whoever runs the service.',
      fixes: ['useLocal'],
      passing: false,
    };
  }
  if (error instanceof InvalidResponseError) {
    return {
      advice: 'Check that the service address points at an Article Audio job service, and try again.',
      fixes: [],
      passing: true,
    };
  }
  // The service's own reason says what went wrong; the buttons (jobErrorFixes) say what to do.
  if (error instanceof JobFailedError) return { advice: '', fixes: [], passing: false };
  if (error instanceof ArticleAudioError) {
    const advice =
      typeof (error.cause as { path?: unknown } | undefined)?.path === 'string'
        ? 'Check that the folder exists, is writable and has free space, or choose another folder.'
        : code === 'redirect'
          ? 'Set the service address to where it redirects (often https:// instead of http://).'
          : code === 'unsupported_url'
            ? ''
            : 'Check the service address and try again.';
    return { advice, fixes: [], passing: true };
  }
  return { advice: '', fixes: [], passing: true };
}

/** A client error as the user reads it (notify.ts shows it after "<what was being done>: "), with its buttons. */
export function describeClientError(error: Error): { message: string; fixes: FixKind[]; passing: boolean } {
  const { advice, fixes, passing } = adviceFor(error);
  return { message: withAdvice(error.message, advice), fixes, passing };
}

/** The message a user reads: the fact, then the advice, each sentence once. */
export function withAdvice(message: string, advice: string): string {
  const fact = message.trim().replace(/\.?$/, '.');
  return advice ? `${fact} ${advice}` : fact;
}
