// A speech provider that speaks OpenAI's protocol (`POST /v1/audio/speech`), on loopback, for tests of the voices
// file and the OpenAI-compatible voice. It checks each request as OpenAI would (path, method, JSON body with model,
// voice, input, response_format and an optional speed, nothing else; the bearer key) and answers with audio it makes
// itself: a 220 Hz tone of 60 ms per character of input (WAV at 24 kHz, or raw 16-bit PCM). `fault` decides, per
// request, to answer otherwise: 429 with Retry-After, 500, an HTML page with status 200, or a first byte late.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type FakeProvider, SECONDS_PER_CHARACTER, startFakeProvider, toneFor as fakeTone } from './fake-provider';

export { SECONDS_PER_CHARACTER };

export const PROVIDER_RATE = 24_000;
/** A real Ogg Opus file (about 2 s; test/fixtures/audio/README.md says where it comes from). */
export const OPUS_FIXTURE = path.join(__dirname, '..', 'fixtures', 'audio', 'lena-start.opus');

export interface SpeechRequest {
  model: string;
  voice: string;
  input: string;
  response_format: string;
  speed?: number;
  authorization: string | undefined;
}

export type Fault =
  | { kind: 'status'; status: number; retryAfterS?: number; body?: string }
  | { kind: 'html' }
  | { kind: 'slow'; delayMs: number };

/** Its base URL is up to the API version: `http://127.0.0.1:<port>/v1`. */
export type SpeechProvider = FakeProvider<SpeechRequest, Fault>;

/** A mono 16-bit WAV of `samples` at `rate`. */
export function wavOf(samples: Int16Array, rate: number): Buffer {
  const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** The tone the provider says for `input`: 60 ms per character, 220 Hz, with a syllable-like swell. */
export function toneFor(input: string): Int16Array {
  return fakeTone(input, PROVIDER_RATE);
}

const FIELDS = new Set(['model', 'voice', 'input', 'response_format', 'speed']);

export function startSpeechProvider(options: { key?: string } = {}): Promise<SpeechProvider> {
  return startFakeProvider<SpeechRequest, Fault>('/v1', ({ req, res, body: bytes, refused, accept }) => {
    const refuse = (status: number, message: string) => {
      refused(message);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
    };
    if (req.method !== 'POST' || req.url !== '/v1/audio/speech') return refuse(404, `no ${req.method} ${req.url}`);
    if (!String(req.headers['content-type']).startsWith('application/json'))
      return refuse(415, 'the body must be JSON');
    const authorization = req.headers.authorization;
    // An error that quotes the header, as some servers do: the engine must redact it.
    if (options.key !== undefined && authorization !== `Bearer ${options.key}`)
      return refuse(401, `Incorrect API key provided: ${authorization ?? '(none)'}`);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    } catch {
      return refuse(400, 'the body is not JSON');
    }
    const extra = Object.keys(body).filter((k) => !FIELDS.has(k));
    if (extra.length > 0) return refuse(400, `unknown fields ${extra.join(', ')}`);
    if (typeof body.model !== 'string' || !body.model) return refuse(400, 'model is required');
    if (typeof body.voice !== 'string' || !body.voice) return refuse(400, 'voice is required');
    if (typeof body.input !== 'string' || !body.input.trim() || body.input.length > 4096)
      return refuse(400, 'input must be 1 to 4096 characters');
    const format = body.response_format ?? 'mp3';
    if (format !== 'wav' && format !== 'pcm' && format !== 'opus')
      return refuse(400, `this fake speaks wav, pcm and opus, not ${JSON.stringify(format)}`);
    if (body.speed !== undefined && (typeof body.speed !== 'number' || body.speed < 0.25 || body.speed > 4))
      return refuse(400, 'speed must be 0.25 to 4');
    const request: SpeechRequest = {
      model: body.model,
      voice: body.voice,
      input: body.input,
      response_format: format,
      ...(typeof body.speed === 'number' ? { speed: body.speed } : {}),
      authorization,
    };
    const fault = accept(request);
    const answer = () => {
      const samples = toneFor(request.input);
      if (format === 'opus') {
        // Opus cannot be encoded here: the answer is a real Ogg Opus file of about 2 s, whatever the input.
        res.writeHead(200, { 'content-type': 'audio/ogg' });
        res.end(readFileSync(OPUS_FIXTURE));
      } else if (format === 'pcm') {
        res.writeHead(200, { 'content-type': 'audio/pcm' });
        res.end(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
      } else {
        res.writeHead(200, { 'content-type': 'audio/wav' });
        res.end(wavOf(samples, PROVIDER_RATE));
      }
    };
    if (!fault) return answer();
    if (fault.kind === 'status') {
      res.writeHead(fault.status, {
        'content-type': 'application/json',
        ...(fault.retryAfterS !== undefined ? { 'retry-after': String(fault.retryAfterS) } : {}),
      });
      return res.end(fault.body ?? JSON.stringify({ error: { message: `fault ${fault.status}` } }));
    }
    if (fault.kind === 'html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end('<!doctype html><html><body><h1>Please sign in</h1></body></html>');
    }
    const timer = setTimeout(answer, fault.delayMs);
    res.on('close', () => clearTimeout(timer));
  });
}
