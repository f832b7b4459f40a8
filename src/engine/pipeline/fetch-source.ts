// Fetching an article page or an intro/outro file: bounded in size, time and redirects, http(s) only.
import { request } from 'undici';
import type { FetchLimits } from './types';

export interface Fetched {
  body: Buffer;
  /** Lower-case media type without parameters, e.g. `text/html`. */
  mediaType: string;
  charset?: string;
  finalUrl: string;
}

export class FetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FetchError';
  }
}

function host(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** GETs a URL within the limits; throws FetchError with a message a user can act on. */
export async function fetchWithLimits(url: string, limits: FetchLimits, signal: AbortSignal, accept: string): Promise<Fetched> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const combined = AbortSignal.any([signal, deadline]);
  let current = url;
  try {
    for (let redirects = 0; ; redirects++) {
      const parsed = new URL(current);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new FetchError(`${url} redirected to ${parsed.protocol} address, which cannot be fetched.`);
      const response = await request(current, {
        method: 'GET',
        signal: combined,
        headers: { accept, 'user-agent': 'ArticleAudio/0.1 (+local engine)', 'accept-encoding': 'identity' },
        headersTimeout: limits.timeoutMs,
        bodyTimeout: limits.timeoutMs,
      });
      const location = response.headers.location;
      if (response.statusCode >= 300 && response.statusCode < 400 && location) {
        await response.body.dump();
        if (redirects >= limits.maxRedirects) throw new FetchError(`${url} redirects more than ${limits.maxRedirects} times.`);
        current = new URL(Array.isArray(location) ? location[0]! : location, current).href;
        continue;
      }
      if (response.statusCode >= 400) {
        await response.body.dump();
        throw new FetchError(`${host(current)} answered ${response.statusCode} for ${current}. Check that the address opens in a browser.`);
      }
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        await response.body.dump({ limit: 0 }).catch(() => {});
        throw new FetchError(`${current} is ${Math.round(declared / 1024)} KB; the limit is ${Math.round(limits.maxBytes / 1024)} KB.`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > limits.maxBytes) {
          response.body.destroy();
          throw new FetchError(`${current} is larger than the limit of ${Math.round(limits.maxBytes / 1024)} KB.`);
        }
        chunks.push(chunk);
      }
      const contentType = String(response.headers['content-type'] ?? '');
      const [mediaType = '', ...params] = contentType.split(';').map((p) => p.trim());
      const charset = params.find((p) => p.toLowerCase().startsWith('charset='))?.slice(8).replace(/"/g, '');
      return { body: Buffer.concat(chunks), mediaType: mediaType.toLowerCase(), charset, finalUrl: current };
    }
  } catch (error) {
    if (error instanceof FetchError) throw error;
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('cancelled');
    if (deadline.aborted) throw new FetchError(`${host(current)} did not send ${current} within ${Math.round(limits.timeoutMs / 1000)} s.`);
    const code = (error as { code?: string }).code;
    const reason = code === 'ENOTFOUND' ? 'the host name was not found' : code === 'ECONNREFUSED' ? 'the connection was refused' : (error as Error).message;
    throw new FetchError(`Could not fetch ${current}: ${reason}.`);
  }
}

/** Decodes a text body with its declared charset (or the one a <meta> names), defaulting to UTF-8. */
export function decodeText(fetched: Fetched): string {
  let charset = fetched.charset;
  if (!charset && fetched.mediaType.includes('html')) {
    const head = fetched.body.subarray(0, 2048).toString('latin1');
    charset = /<meta[^>]+charset=["']?([\w-]+)/i.exec(head)?.[1];
  }
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(fetched.body);
  } catch {
    return new TextDecoder('utf-8').decode(fetched.body);
  }
}
