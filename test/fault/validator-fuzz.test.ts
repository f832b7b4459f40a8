// Property-based fuzzing of POST /v1/article-to-audio against the real engine on loopback: random bodies (valid,
// nearly valid, wrong types, unknown fields, bad URLs, texts around both length limits, non-JSON, invalid UTF-8) and
// random headers (Authorization, Content-Type, Idempotency-Key). The engine must never answer 5xx, must never accept
// a request that breaks the rules of DESIGN.md, and must accept every request that keeps them. The expected answer
// comes from an oracle written here from DESIGN.md, not from the engine's own validator.
//
// The seed is fixed (FAULT_SEED overrides it) and printed; fast-check reports seed and path of a failing case, so
// `FAULT_SEED=<seed> node --import tsx --test test/fault/validator-fuzz.test.ts` replays it.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { type TestPipelineEngine, startTestPipelineEngine } from '../support/test-pipeline-engine';

const TOKEN = 'fuzz-token-0123456789abcdef';
const SEED = Number(process.env.FAULT_SEED ?? 20261122);
const RUNS = Number(process.env.FAULT_RUNS ?? 400);
const MODELS = ['article-audio-1-mini', 'article-audio-1-pro', 'article-podcast-1-pro'];
const FIELDS = new Set(['model_id', 'url', 'text', 'intro_audio_url', 'outro_audio_url']);

// ---- the oracle: DESIGN.md's rules, restated independently ----

/** Code points, once control characters (but tab and line breaks) and format characters (Cf) are left out. */
function readableLength(text: string): number {
  // eslint-disable-next-line no-control-regex -- control characters are what is left out
  return [...text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\p{Cf}]/gu, '').trim()].length;
}

/**
 * A text that is only a code or data (issue 18: a run of more than 64 characters without spaces that is not a link and
 * not in a script written without spaces) plus fewer than 50 characters of words has nothing to read aloud.
 */
function mostlyOneRun(text: string): boolean {
  let words = 0;
  let longRun = false;
  for (const run of text.split(/\s+/)) {
    const long =
      [...run].length > 64 &&
      !/^(?:https?:\/\/|www\.)/i.test(run) &&
      !/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}]/u.test(
        run,
      );
    if (long) longRun = true;
    else words += run.length;
  }
  return longRun && words < 50;
}

function goodUrl(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 2048) return false;
  // eslint-disable-next-line no-control-regex -- spaces and control characters anywhere are refused
  if (/[\s\u0000-\u001f\u007f]/.test(value)) return false;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return false;
  }
  return (
    (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.username === '' && parsed.password === ''
  );
}

function validBody(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const fields = body as Record<string, unknown>;
  if (Object.keys(fields).some((key) => !FIELDS.has(key))) return false;
  if (typeof fields.model_id !== 'string' || !MODELS.includes(fields.model_id)) return false;
  const hasUrl = fields.url !== undefined;
  const hasText = fields.text !== undefined;
  if (hasUrl === hasText) return false;
  if (hasUrl && !goodUrl(fields.url)) return false;
  if (hasText) {
    if (typeof fields.text !== 'string') return false;
    const length = readableLength(fields.text);
    if (length < 50 || length > 100_000) return false;
    if (!/[\p{L}\p{N}]/u.test(fields.text)) return false;
    if (mostlyOneRun(fields.text)) return false;
  }
  for (const key of ['intro_audio_url', 'outro_audio_url'])
    if (fields[key] !== undefined && !goodUrl(fields[key])) return false;
  return true;
}

function validJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const [type, ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json') return false;
  const charset = parameters
    .find((p) => p.startsWith('charset='))
    ?.slice(8)
    .replace(/"/g, '');
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

interface FuzzRequest {
  authorization: string | undefined;
  contentType: string | undefined;
  idempotencyKey: string | undefined;
  /** A value sent as JSON, or raw bytes / text sent as they are. */
  body: { json: unknown } | { raw: string } | { bytes: Uint8Array };
}

type Expected = { accept: true } | { accept: false; status: number };

/** What fetch puts on the wire: header values lose leading and trailing spaces and tabs. */
const wire = (value: string | undefined) => value?.replace(/^[ \t]+|[ \t]+$/g, '');

function expected(request: FuzzRequest): Expected {
  const authorization = wire(request.authorization);
  const idempotencyKey = wire(request.idempotencyKey);
  const contentType = wire(request.contentType);
  const auth = authorization === undefined ? undefined : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)?.[1];
  if (auth !== TOKEN) return { accept: false, status: 401 };
  if (idempotencyKey !== undefined && !/^[\x21-\x7e]{1,255}$/.test(idempotencyKey))
    return { accept: false, status: 422 };
  if (!validJsonContentType(contentType)) return { accept: false, status: 415 };
  let value: unknown;
  if ('json' in request.body) value = request.body.json;
  else {
    try {
      const text =
        'raw' in request.body ? request.body.raw : new TextDecoder('utf-8', { fatal: true }).decode(request.body.bytes);
      value = JSON.parse(text) as unknown;
    } catch {
      return { accept: false, status: 400 };
    }
  }
  return validBody(value) ? { accept: true } : { accept: false, status: 422 };
}

// ---- what is generated ----

const VALID_TEXT = 'The river town woke early, and the boats left before the sun rose over the hills. ';

const textArb = fc.oneof(
  // Around the lower limit, with whitespace that trimming removes and characters that are two UTF-16 units.
  fc
    .tuple(
      fc.integer({ min: 40, max: 60 }),
      fc.constantFrom('a', 'é', '😀', ' ', '\u00a0'),
      fc.constantFrom('', '   ', '\n\t', '\u2028'),
    )
    .map(([n, ch, pad]) => `${pad}${'x'.repeat(Math.max(0, n - 1))}${ch}${pad}`),
  // Around the upper limit.
  fc
    .tuple(fc.integer({ min: 99_990, max: 100_010 }), fc.constantFrom('b', '😀'))
    .map(([n, ch]) => `${'a'.repeat(n - 1)}${ch}`),
  fc.string({ minLength: 0, maxLength: 300, unit: 'grapheme' }),
  fc.string({ minLength: 0, maxLength: 120, unit: 'binary' }),
  fc.integer({ min: 1, max: 4 }).map((n) => VALID_TEXT.repeat(n)),
);

const urlArb = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.constantFrom(
    'https://example.com/a',
    'http://127.0.0.1:9/x',
    'ftp://example.com/file',
    'javascript:alert(1)',
    'file:///etc/passwd',
    'http://user:secret@example.com/',
    'https://',
    'example.com/no-scheme',
    'http://[::1]/',
    'HTTPS://EXAMPLE.COM/UP',
    'data:text/plain,hello',
  ),
  fc.string({ maxLength: 60 }),
  fc.integer({ min: 2030, max: 2060 }).map((n) => `https://example.com/${'p'.repeat(n - 20)}`),
);

/** A field: absent, well formed, or any JSON value at all. */
const field = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 5, arbitrary: good },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );

const objectBodyArb = fc
  .record({
    model_id: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...MODELS) },
      { weight: 1, arbitrary: fc.constantFrom('ARTICLE-AUDIO-1-MINI', 'article-audio-2', '', ' article-audio-1-pro') },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    ),
    url: field(urlArb),
    text: field(textArb),
    intro_audio_url: field(urlArb),
    outro_audio_url: field(urlArb),
    extra: fc.option(
      fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
      { freq: 6 },
    ),
  })
  .map(({ extra, ...fields }) => {
    const body: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) body[key] = value;
    // Keys like __proto__ must become real own properties, as they would from any JSON client.
    if (extra)
      for (const [key, value] of Object.entries(extra))
        Object.defineProperty(body, key, { value, enumerable: true, writable: true, configurable: true });
    return body;
  });

const bodyArb: fc.Arbitrary<FuzzRequest['body']> = fc.oneof(
  { weight: 12, arbitrary: objectBodyArb.map((json) => ({ json })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((json) => ({ json })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 80 }).map((raw) => ({ raw })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 80 }).map((bytes) => ({ bytes })) },
  { weight: 1, arbitrary: objectBodyArb.map((json) => ({ raw: JSON.stringify(json).slice(0, -1) })) },
);

/** Header values a client can put on the wire (printable ASCII and tabs; fetch refuses the rest itself). */
const headerText = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});

const authorizationArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant(`Bearer ${TOKEN}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      `bearer ${TOKEN}`,
      `Bearer\t${TOKEN} `,
      `Bearer  ${TOKEN}`,
      `Bearer ${TOKEN}x`,
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN} extra`,
      'Bearer',
      ` Bearer ${TOKEN}`,
    ),
  },
  { weight: 1, arbitrary: headerText },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const contentTypeArb = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON;charset="UTF-8"',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'text/plain',
      'application/json; charset=latin1',
      'application/x-www-form-urlencoded',
      'application/jsonx',
      '',
    ),
  },
  { weight: 1, arbitrary: headerText },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const idempotencyKeyArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  {
    weight: 2,
    arbitrary: fc.string({
      unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
      minLength: 1,
      maxLength: 40,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      headerText,
      fc.integer({ min: 250, max: 260 }).map((n) => 'k'.repeat(n)),
    ),
  },
);

const goodUrlArb = fc.oneof(
  fc.webUrl({ withQueryParameters: true }),
  fc.constantFrom('https://example.com/a', 'http://127.0.0.1:9/x', 'http://[::1]/'),
);

/** Requests built to be valid, or one small step away from it, so that both sides of the border get exercised. */
const nearlyValidArb: fc.Arbitrary<FuzzRequest> = fc
  .record({
    model_id: fc.constantFrom(...MODELS),
    source: fc.oneof(
      goodUrlArb.map((url) => ({ url })),
      textArb.map((text) => ({ text })),
    ),
    intro_audio_url: fc.option(goodUrlArb, { nil: undefined }),
    outro_audio_url: fc.option(goodUrlArb, { nil: undefined }),
    contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8'),
    idempotencyKey: fc.option(fc.uuid(), { nil: undefined }),
  })
  .map(({ source, contentType, idempotencyKey, ...rest }) => {
    const json: Record<string, unknown> = { ...rest, ...source };
    for (const key of Object.keys(json)) if (json[key] === undefined) delete json[key];
    return { authorization: `Bearer ${TOKEN}`, contentType, idempotencyKey, body: { json } };
  });

const requestArb: fc.Arbitrary<FuzzRequest> = fc.oneof(
  nearlyValidArb,
  fc.record({
    authorization: authorizationArb,
    contentType: contentTypeArb,
    idempotencyKey: idempotencyKeyArb,
    body: bodyArb,
  }),
);

describe('fault: fuzzing the submission validator (fast-check, real engine on loopback)', () => {
  let engine: TestPipelineEngine;
  let keyCounter = 0;

  before(async () => {
    // Accepted jobs never end: the fuzz is about the front door, not the work. In-process (embedded), or an API node
    // over Postgres when test/team/suites-postgres.test.ts runs this file.
    engine = await startTestPipelineEngine({
      tokens: [TOKEN],
      concurrency: 1,
      queueDepth: 100_000,
      holdEveryJob: true,
    });
  });
  after(async () => {
    await engine?.close();
  });

  it(`never answers 5xx, never accepts an invalid job, accepts every valid one (${RUNS} runs)`, async (t) => {
    t.diagnostic(`fast-check seed ${SEED} (replay with FAULT_SEED=${SEED}), ${engine.mode} engine`);
    const tally = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArb, async (generated) => {
        // A fresh key per run, so that a key reused by shrinking is not an idempotent repeat of another body.
        const request = {
          ...generated,
          idempotencyKey:
            generated.idempotencyKey === undefined ? undefined : `${generated.idempotencyKey}${++keyCounter}`,
        };
        const headers: Record<string, string> = {};
        if (request.authorization !== undefined) headers.authorization = request.authorization;
        if (request.contentType !== undefined) headers['content-type'] = request.contentType;
        if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
        const body =
          'json' in request.body
            ? JSON.stringify(request.body.json)
            : 'raw' in request.body
              ? request.body.raw
              : request.body.bytes;
        const response = await fetch(`${engine.url}/v1/article-to-audio`, { method: 'POST', headers, body });
        const text = await response.text();
        tally.set(response.status, (tally.get(response.status) ?? 0) + 1);
        const want = expected(request);
        assert.ok(response.status < 500, `answered ${response.status}: ${text.slice(0, 300)}`);
        const envelope = JSON.parse(text) as { data: unknown; errors: { code: string; message: string }[] | null };
        if (want.accept) {
          assert.equal(response.status, 202, `a valid request was refused: ${text.slice(0, 300)}`);
          const jobId = (envelope.data as { job_id: string }).job_id;
          const job = await fetch(`${engine.url}/v1/jobs/${jobId}`, { headers: { authorization: `Bearer ${TOKEN}` } });
          assert.equal(job.status, 200, 'an accepted job is not there');
          await job.arrayBuffer();
        } else {
          assert.notEqual(response.status, 202, `an invalid request was accepted (expected ${want.status})`);
          assert.equal(response.status, want.status, `expected ${want.status}: ${text.slice(0, 300)}`);
          assert.equal(envelope.data, null);
          assert.ok(
            Array.isArray(envelope.errors) &&
              envelope.errors.length > 0 &&
              envelope.errors.every((e) => typeof e.message === 'string' && e.message.length > 0),
          );
        }
      }),
      { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
    );
    t.diagnostic(
      `answers: ${[...tally]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status}×${n}`)
        .join(', ')}`,
    );
    // The property holds only if both sides were exercised.
    assert.ok((tally.get(202) ?? 0) >= RUNS / 10, 'too few valid requests were generated');
    assert.ok((tally.get(422) ?? 0) >= RUNS / 10, 'too few invalid bodies were generated');
  });
});
