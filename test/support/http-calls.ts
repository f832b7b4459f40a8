// Plain HTTP calls against the job service for tests: fetch, no client library, so the tests see the wire.

/** The job object as the wire carries it (spec 2.3 plus the engine's additive fields). */
export interface WireJob {
  id: string;
  status: string;
  created_at: string;
  progress: number;
  outputs: { results: WireOutput[] } | null;
  error: { code: string; message: string } | null;
  [extra: string]: unknown;
}

export interface WireOutput {
  url: string;
  content_type: string;
  duration_s?: number;
}

export interface WireError {
  code: string;
  message: string;
  field?: string;
}

export class Answer {
  constructor(
    readonly status: number,
    readonly headers: Headers,
    readonly text: string,
  ) {}

  /** The parsed body (undefined when it is not JSON). */
  get body(): unknown {
    try {
      return JSON.parse(this.text) as unknown;
    } catch {
      return undefined;
    }
  }

  private envelope(): { data: unknown; errors: unknown } {
    const body = this.body as { data?: unknown; errors?: unknown } | undefined;
    if (typeof body !== 'object' || body === null || !('data' in body) || !('errors' in body)) {
      throw new Error(`Not an envelope (${this.status}): ${this.text.slice(0, 300)}`);
    }
    return body as { data: unknown; errors: unknown };
  }

  get job(): WireJob {
    return this.envelope().data as WireJob;
  }

  /** The job id of a 202 answer. */
  get jobId(): string {
    const data = this.envelope().data as { job_id?: unknown } | null;
    if (typeof data?.job_id !== 'string') throw new Error(`No job id in (${this.status}): ${this.text.slice(0, 300)}`);
    return data.job_id;
  }

  get errors(): WireError[] {
    const errors = this.envelope().errors;
    if (!Array.isArray(errors)) throw new Error(`No errors in (${this.status}): ${this.text.slice(0, 300)}`);
    return errors as WireError[];
  }
}

export async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  return new Answer(response.status, response.headers, await response.text());
}

export interface ServiceCalls {
  submit(body: unknown, headers?: Record<string, string>): Promise<Answer>;
  get(path: string, headers?: Record<string, string>): Promise<Answer>;
  post(path: string, headers?: Record<string, string>): Promise<Answer>;
}

export function serviceCalls(baseUrl: string, token: string): ServiceCalls {
  const auth = { authorization: `Bearer ${token}` };
  const absolute = (path: string) => (path.startsWith('http') ? path : baseUrl + path);
  return {
    submit: (body, headers = {}) =>
      call(`${baseUrl}/v1/article-to-audio`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    get: (path, headers = {}) => call(absolute(path), { headers: { ...auth, ...headers } }),
    post: (path, headers = {}) => call(absolute(path), { method: 'POST', headers: { ...auth, ...headers } }),
  };
}

/** Polls `probe` until it gives a value; fails after `timeoutMs` naming what it waited for. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Polls a job until `test` holds for its status body. */
export async function waitForJob(
  calls: ServiceCalls,
  jobId: string,
  test: (job: WireJob) => boolean,
  timeoutMs = 15_000,
): Promise<WireJob> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await calls.get(`/v1/jobs/${jobId}`);
    if (answer.status === 200 && test(answer.job)) return answer.job;
    if (Date.now() > deadline)
      throw new Error(`Job ${jobId} did not get there in ${timeoutMs} ms; last answer ${answer.status} ${answer.text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Text long enough to be accepted (the service wants 50 to 100000 characters). */
export function articleText(words = 60): string {
  const sentence = [
    'The river town woke early.',
    'Boats left before the sun rose.',
    'Markets filled with fish and bread.',
    'By noon the square was quiet again.',
  ];
  const out: string[] = [];
  for (let i = 0; out.join(' ').split(' ').length < words; i++) out.push(sentence[i % sentence.length] as string);
  return out.join(' ');
}
