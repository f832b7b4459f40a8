// A speech provider that speaks ElevenLabs' protocol (`POST /v1/text-to-speech/{voice_id}/with-timestamps`), on
// loopback, for tests of the ElevenLabs voice. It checks each request as ElevenLabs does (path, method, the
// `xi-api-key` header, a JSON body of text and model_id only, output_format in the query) and answers as it does:
// JSON with the audio as base64 (a tone of 60 ms per character, raw 16-bit PCM at the rate of the output format) and
// the start and end time of every character. Errors come in ElevenLabs' shape ({"detail": {"status", "message"}}).
// `fault` decides, per request, to answer otherwise: a status, an HTML page with 200, JSON without audio, a body cut
// short, or a first byte late.
import { type FakeProvider, SECONDS_PER_CHARACTER, startFakeProvider, toneFor } from './fake-provider';

export { SECONDS_PER_CHARACTER };

export interface ElevenLabsRequest {
  voiceId: string;
  text: string;
  modelId: string;
  outputFormat: string;
  key: string | undefined;
}

export type ElevenLabsFault =
  | { kind: 'status'; status: number; retryAfterS?: number; detail?: { status: string; message: string } }
  | { kind: 'html' }
  | { kind: 'no-audio' }
  | { kind: 'truncated' }
  | { kind: 'slow'; delayMs: number };

/** Its base URL is without the API version: `http://127.0.0.1:<port>`. */
export type ElevenLabsProvider = FakeProvider<ElevenLabsRequest, ElevenLabsFault>;

const FORMATS = new Set(['pcm_16000', 'pcm_22050', 'pcm_24000', 'pcm_44100']);

function tone(text: string, rate: number): Buffer {
  const samples = toneFor(text, rate);
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
}

/** The alignment ElevenLabs sends: every character of the text with its start and end. */
export function alignmentFor(text: string) {
  const characters = [...text];
  return {
    characters,
    character_start_times_seconds: characters.map((_, i) => Number((i * SECONDS_PER_CHARACTER).toFixed(3))),
    character_end_times_seconds: characters.map((_, i) => Number(((i + 1) * SECONDS_PER_CHARACTER).toFixed(3))),
  };
}

export function startElevenLabs(options: { key?: string } = {}): Promise<ElevenLabsProvider> {
  return startFakeProvider<ElevenLabsRequest, ElevenLabsFault>('', ({ req, res, body: bytes, refused, accept }) => {
    const refuse = (status: number, detailStatus: string, message: string) => {
      refused(message);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: { status: detailStatus, message } }));
    };
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/v1\/text-to-speech\/([^/]+)\/with-timestamps$/.exec(url.pathname);
    if (req.method !== 'POST' || !match) return refuse(404, 'not_found', `no ${req.method} ${url.pathname}`);
    const key = req.headers['xi-api-key'];
    const keyText = Array.isArray(key) ? key[0] : key;
    if (options.key !== undefined && keyText !== options.key) return refuse(401, 'invalid_api_key', 'Invalid API key');
    if (req.headers.authorization)
      return refuse(400, 'invalid_request', 'ElevenLabs takes xi-api-key, not Authorization');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    } catch {
      res.writeHead(422, { 'content-type': 'application/json' });
      refused('the body is not JSON');
      return res.end(JSON.stringify({ detail: [{ loc: ['body'], msg: 'Invalid JSON', type: 'value_error' }] }));
    }
    const extra = Object.keys(body).filter((k) => k !== 'text' && k !== 'model_id');
    if (extra.length > 0) return refuse(400, 'invalid_request', `unexpected fields ${extra.join(', ')}`);
    if (typeof body.text !== 'string' || !body.text.trim()) return refuse(400, 'invalid_request', 'text is required');
    const outputFormat = url.searchParams.get('output_format') ?? 'mp3_44100_128';
    if (!FORMATS.has(outputFormat))
      return refuse(400, 'invalid_request', `this fake speaks pcm_* only, not ${outputFormat}`);
    const request: ElevenLabsRequest = {
      voiceId: decodeURIComponent(match[1]!),
      text: body.text,
      modelId: typeof body.model_id === 'string' ? body.model_id : 'eleven_multilingual_v2',
      outputFormat,
      key: keyText,
    };
    const fault = accept(request);
    const answer = () => {
      const payload = JSON.stringify({
        audio_base64: tone(request.text, Number(outputFormat.slice(4))).toString('base64'),
        alignment: alignmentFor(request.text),
        normalized_alignment: alignmentFor(request.text),
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(payload);
    };
    if (!fault) return answer();
    switch (fault.kind) {
      case 'status':
        res.writeHead(fault.status, {
          'content-type': 'application/json',
          ...(fault.retryAfterS !== undefined ? { 'retry-after': String(fault.retryAfterS) } : {}),
        });
        return res.end(
          JSON.stringify({ detail: fault.detail ?? { status: 'server_error', message: `status ${fault.status}` } }),
        );
      case 'html':
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html><body><h1>Sign in</h1></body></html>');
      case 'no-audio':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ alignment: alignmentFor(request.text) }));
      case 'truncated': {
        const full = JSON.stringify({ audio_base64: tone(request.text, 16_000).toString('base64') });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(full.length) });
        res.write(full.slice(0, Math.floor(full.length / 2)));
        return setTimeout(() => res.destroy(), 20);
      }
      case 'slow':
        return setTimeout(answer, fault.delayMs);
    }
  });
}
