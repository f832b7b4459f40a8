// Reads a JSON request body within the size limit. Checks that need only the headers (media type, declared length)
// come first, so an oversized or mistyped upload is refused before it is read; `Expect: 100-continue` clients are
// told to send the body only once those checks passed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './api-error';

/** Bytes of an unwanted body read and thrown away after answering, before the connection is cut instead. */
const DISCARD_LIMIT = 64 * 1024 * 1024;

export async function readJsonBody(req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<unknown> {
  checkJsonMediaType(req.headers['content-type']);
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  if (req.headers.expect?.toLowerCase() === '100-continue') res.writeContinue();

  const body = await receive(req, maxBytes);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw ApiError.of(400, 'invalid_json', 'The body is not valid UTF-8.');
  }
  if (text.trim() === '') throw ApiError.of(400, 'invalid_json', 'The body is empty; send a JSON object.');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw ApiError.of(400, 'invalid_json', `The body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Collects the body; stops collecting (without destroying the connection) once it exceeds the limit. */
function receive(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  // A client that disconnects mid-body must not surface as an unhandled 'error' after this gave up reading.
  req.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (error?: Error) => {
      req.off('data', onData).off('end', onEnd).off('error', settle);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) settle(tooLarge(maxBytes));
      else chunks.push(chunk);
    };
    const onEnd = () => settle();
    req.on('data', onData).on('end', onEnd).on('error', settle);
  });
}

/**
 * After answering early (an error before the body was read), reads and drops what the client still sends, so it
 * receives the answer instead of a reset connection; a client that keeps sending far too much is cut off.
 */
export function discardBody(req: IncomingMessage): void {
  if (req.readableEnded) return;
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > DISCARD_LIMIT) req.socket.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
}

function checkJsonMediaType(header: string | undefined): void {
  const [type = '', ...parameters] = (header ?? '').split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (type !== 'application/json' || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) {
    throw ApiError.of(
      415,
      'unsupported_media_type',
      header === undefined
        ? 'Send the body as JSON with `Content-Type: application/json`.'
        : `Send the body as UTF-8 JSON with \`Content-Type: application/json\`, not \`${header.slice(0, 100)}\`.`,
    );
  }
}

function tooLarge(maxBytes: number): ApiError {
  return ApiError.of(413, 'payload_too_large', `The body is larger than ${maxBytes} bytes.`);
}
