// Fetching an article page or an intro/outro file: bounded in size, time and redirects, http(s) only, and only from
// addresses the network policy allows (network-policy.ts), checked on every connection including redirect hops:
// undici's redirect interceptor follows them through the same policy agent, and refuses non-http(s) targets and loops.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Dispatcher } from 'undici';
import { http } from '../http';
import { storableText } from '../../protocol/text';
import { policyAgent } from './network-policy';
import type { FetchLimits } from '../types';

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

const DECODERS: Record<string, (body: Buffer, options: zlib.ZlibOptions & zlib.BrotliOptions) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  br: promisify(zlib.brotliDecompress),
  // "deflate" is meant to be zlib-wrapped, but some servers send raw deflate; browsers accept both.
  deflate: async (body, options) => {
    try {
      return await promisify(zlib.inflate)(body, options);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'Z_DATA_ERROR') throw error;
      return promisify(zlib.inflateRaw)(body, options);
    }
  },
};

/** Undoes the Content-Encoding(s) of a body, never producing more than maxBytes. */
async function decodeContent(
  body: Buffer,
  header: string | string[] | undefined,
  url: string,
  maxBytes: number,
): Promise<Buffer> {
  const codings = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  // Some servers label an empty answer (a 204-like 200) with an encoding; there is nothing to decode.
  if (codings.length === 0 || body.length === 0) return body;
  if (codings.length > 2)
    throw new FetchError(
      `${url} is sent with ${codings.length} content encodings stacked; this engine decodes at most two.`,
    );
  let decoded = body;
  for (const coding of codings.reverse()) {
    const decode = DECODERS[coding];
    if (!decode)
      throw new FetchError(
        `${url} is sent with Content-Encoding "${coding.slice(0, 40)}", which this engine cannot decode (it reads gzip, deflate and br).`,
      );
    try {
      decoded = await decode(decoded, { maxOutputLength: maxBytes });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new FetchError(`${url} is larger than the limit of ${Math.round(maxBytes / 1024)} KB once uncompressed.`);
      }
      throw new FetchError(`${url} is sent as ${coding} but does not decompress (${(error as Error).message}).`);
    }
  }
  return decoded;
}

/** GETs a URL within the limits; throws FetchError with a message a user can act on. */
export async function fetchWithLimits(
  url: string,
  limits: FetchLimits,
  signal: AbortSignal,
  accept: string,
): Promise<Fetched> {
  const allowPrivateNetwork = limits.allowPrivateNetwork ?? false;
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const combined = AbortSignal.any([signal, deadline]);
  // One agent per fetch: its connections end with it, so none is ever reused for another job.
  const dispatcher = policyAgent({
    allowPrivateNetwork,
    allowedHosts: limits.allowedHosts,
    connectTimeoutMs: limits.timeoutMs,
  });
  let current = url;
  const recordHops: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) => {
    if (options.origin !== undefined) current = new URL(options.path, options.origin).href;
    return dispatch(options, handler);
  };
  const tooManyRedirects = () => new FetchError(`${url} redirects more than ${limits.maxRedirects} times.`);
  try {
    const parsed = new URL(current);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new FetchError(`${url} is a ${parsed.protocol} address, which cannot be fetched.`);
    const response = await http().request(current, {
      method: 'GET',
      signal: combined,
      // The recorder sits inside the redirect interceptor, so it sees every hop, also one that fails to connect:
      // the error then names the address that failed, not the one the user gave.
      dispatcher: dispatcher.compose(
        recordHops,
        http().interceptors.redirect({ maxRedirections: limits.maxRedirects }),
      ),
      headers: { accept, 'user-agent': 'ArticleAudio/0.1 (+local engine)', 'accept-encoding': 'gzip, deflate, br' },
      headersTimeout: limits.timeoutMs,
      bodyTimeout: limits.timeoutMs,
    });
    if (response.statusCode >= 300 && response.statusCode < 400 && response.headers.location) {
      // Past the limit, the interceptor hands the redirect itself over.
      await response.body.dump();
      throw tooManyRedirects();
    }
    if (response.statusCode >= 400) {
      await response.body.dump();
      throw new FetchError(
        `${host(current)} answered ${response.statusCode} for ${current}. Check that the address opens in a browser.`,
      );
    }
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > limits.maxBytes) {
      await response.body.dump({ limit: 0 }).catch(() => {});
      throw new FetchError(
        `${current} is ${Math.round(declared / 1024)} KB; the limit is ${Math.round(limits.maxBytes / 1024)} KB.`,
      );
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
    const body = await decodeContent(
      Buffer.concat(chunks),
      response.headers['content-encoding'],
      current,
      limits.maxBytes,
    );
    const contentType = String(response.headers['content-type'] ?? '');
    const [mediaType = '', ...params] = contentType.split(';').map((p) => p.trim());
    const charset = params
      .find((p) => p.toLowerCase().startsWith('charset='))
      ?.slice(8)
      .replace(/"/g, '');
    return { body, mediaType: mediaType.toLowerCase(), charset, finalUrl: current };
  } catch (error) {
    if (error instanceof FetchError) throw error;
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('cancelled');
    // undici's redirect handler refuses these (core/util.js parseURL, redirect-handler.js) before connecting anywhere.
    const refused = (error as { code?: string }).code === 'UND_ERR_INVALID_ARG' ? (error as Error).message : '';
    if (refused.startsWith('Invalid URL protocol'))
      throw new FetchError(`${url} redirected to a non-http address, which cannot be fetched.`);
    if (refused.startsWith('Redirect loop detected')) throw tooManyRedirects();
    if (!allowPrivateNetwork) {
      // A shared service: its clients must learn nothing about the networks it sits in. A blocked address, a refused
      // connection, a time-out and an unknown name read the same, so fetches (article or intro/outro) cannot be used
      // to scan hosts or ports.
      throw new FetchError(
        `Could not fetch ${current}: it cannot be reached from this service (it does not answer, or it is on a private network, which this service does not fetch).`,
      );
    }
    if (deadline.aborted)
      throw new FetchError(`${host(current)} did not send ${current} within ${Math.round(limits.timeoutMs / 1000)} s.`);
    const code = (error as { code?: string }).code;
    const reason =
      code === 'ENOTFOUND'
        ? 'the host name was not found'
        : code === 'ECONNREFUSED'
          ? 'the connection was refused'
          : (error as Error).message;
    throw new FetchError(`Could not fetch ${current}: ${reason}.`);
  } finally {
    void dispatcher.destroy().catch(() => undefined);
  }
}

/** Decodes a text body with its declared charset (or the one a <meta> names), defaulting to UTF-8. */
export function decodeText(fetched: Fetched): string {
  let charset = fetched.charset;
  if (!charset && fetched.mediaType.includes('html')) {
    const head = fetched.body.subarray(0, 2048).toString('latin1');
    charset = /<meta[^>]+charset=["']?([\w-]+)/i.exec(head)?.[1];
  }
  // A NUL in a page is never text to read (and no store takes it).
  try {
    return storableText(new TextDecoder(charset ?? 'utf-8').decode(fetched.body));
  } catch {
    return storableText(new TextDecoder('utf-8').decode(fetched.body));
  }
}
