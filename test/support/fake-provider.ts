// What the fake speech providers share (speech-provider.ts speaks OpenAI's protocol, elevenlabs-provider.ts
// ElevenLabs'): a server on loopback that reads each request whole, keeps the well-formed requests and the refusals
// for the test to read, asks the test's `fault` how to answer each request, and makes its audio: a 220 Hz tone with a
// syllable-like swell, 60 ms per character.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const SECONDS_PER_CHARACTER = 0.06;

export interface FakeProvider<Request, Fault> {
  /** Where the API starts (each provider says which part of the path belongs to it). */
  baseUrl: string;
  /** Every well-formed, authorized request, in order of arrival (faulted ones too). */
  requests: Request[];
  /** Requests refused as malformed or unauthorized, with the reason. */
  refused: string[];
  /** Decides each request's answer (n counts requests from 0 since the last reset); undefined: the audio. */
  fault?: (request: Request, n: number) => Fault | undefined;
  /** Forgets the requests, the refusals and the fault; counts from 0 again. */
  reset(): void;
  close(): Promise<void>;
}

/** One request to a fake provider, read whole. */
export interface FakeCall<Request, Fault> {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  body: Buffer;
  /** Records a refusal (the provider answers it in its own shape). */
  refused: (message: string) => void;
  /** Records a well-formed request and says how to answer it (the test's fault, if any). */
  accept: (request: Request) => Fault | undefined;
}

/** Starts a fake provider on a free loopback port; `path` is added to its origin to make `baseUrl`. */
export async function startFakeProvider<Request, Fault>(
  path: string,
  handle: (call: FakeCall<Request, Fault>) => void,
): Promise<FakeProvider<Request, Fault>> {
  let count = 0;
  const provider: FakeProvider<Request, Fault> = {
    baseUrl: '',
    requests: [],
    refused: [],
    reset: () => {
      provider.requests.length = 0;
      provider.refused.length = 0;
      provider.fault = undefined;
      count = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () =>
      handle({
        req,
        res,
        body: Buffer.concat(chunks),
        refused: (message) => provider.refused.push(message),
        accept: (request) => {
          provider.requests.push(request);
          return provider.fault?.(request, count++);
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  provider.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return provider;
}

/** The tone a fake provider says for `text` at `rate` samples a second: 60 ms per character, 220 Hz, with a swell. */
export function toneFor(text: string, rate: number): Int16Array {
  const n = Math.round(text.length * SECONDS_PER_CHARACTER * rate);
  const samples = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const t = i / rate;
    const swell = 0.6 + 0.4 * Math.sin(2 * Math.PI * 4 * t);
    samples[i] = Math.round(9000 * swell * Math.sin(2 * Math.PI * 220 * t));
  }
  return samples;
}
