// Shared set-up for the client's tests: a client pointed at a fault server, with fast retries and a captured log.
import { JobServiceClient, type JobServiceClientOptions } from '../../src/api';
import type { FaultServer } from './fault-server';

export const API_KEY = 'sk-test-9f8e7d6c5b4a39281706';

export interface TestClient {
  client: JobServiceClient;
  /** Every log line the client wrote, as "level: message". */
  logs: string[];
}

export function clientFor(server: FaultServer | string, options: Partial<JobServiceClientOptions> = {}): TestClient {
  const logs: string[] = [];
  const client = new JobServiceClient({
    baseUrl: typeof server === 'string' ? server : server.url,
    apiKey: API_KEY,
    retryBackoff: { initialMs: 20, maxMs: 100 },
    requestTimeoutMs: 5000,
    polling: { initialMs: 40, factor: 2, maxMs: 200 },
    stream: { reconnectMs: 20, idleTimeoutMs: 5000, statusCheckMs: 60_000 },
    log: (level, message) => logs.push(`${level}: ${message}`),
    ...options,
  });
  return { client, logs };
}

/** The rejection of a promise (fails when it resolves), and how long it took to settle. */
export async function rejectionOf(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  try {
    await promise;
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
  throw new Error('expected the promise to reject, but it resolved');
}

export const TEXT = 'This is a short article. It has enough characters to pass the minimum length check easily.';
