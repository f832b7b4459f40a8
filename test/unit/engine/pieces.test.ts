// The engine's small pieces on their own: request validation, tokens, job ids, progress throttling, the queue and
// the settings of the engine process.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TokenRing, ownerIdOf } from '../../../src/engine/core/auth';
import { isJobId, newJobId } from '../../../src/engine/core/job-id';
import { JobQueue } from '../../../src/engine/core/job-queue';
import { ProgressThrottle } from '../../../src/engine/core/progress-throttle';
import { UsageError, readEngineSettings } from '../../../src/engine/settings';
import { checkSubmission } from '../../../src/engine/core/submission';
import { articleText } from '../../support/http-calls';

const mini = 'article-audio-1-mini';

function problems(body: unknown): { field: string; message: string }[] {
  const checked = checkSubmission(body);
  return checked.ok ? [] : checked.issues;
}

describe('engine: submission validation', () => {
  it('accepts exactly one of url and text, trims text, and keeps only given fields', () => {
    const checked = checkSubmission({
      model_id: mini,
      text: `  ${articleText()}  `,
      intro_audio_url: 'https://a.example/intro.mp3',
    });
    assert.ok(checked.ok);
    assert.deepEqual(Object.keys(checked.submission).sort(), ['intro_audio_url', 'model_id', 'text']);
    assert.equal(checked.submission.text, articleText());
    assert.ok(checkSubmission({ model_id: 'article-podcast-1-pro', url: 'http://example.com/a?b=c#d' }).ok);
  });

  it('reports one entry per bad field, with its JSON path', () => {
    const found = problems({
      model_id: 'gpt',
      url: 'ftp://x',
      intro_audio_url: 7,
      outro_audio_url: 'nope',
      extra: 1,
      other: {},
    });
    assert.deepEqual(found.map((p) => p.field).sort(), [
      'extra',
      'intro_audio_url',
      'model_id',
      'other',
      'outro_audio_url',
      'url',
    ]);
    assert.deepEqual(problems({ text: articleText() }), [
      {
        field: 'model_id',
        message: 'model_id is required: one of article-audio-1-mini, article-audio-1-pro, article-podcast-1-pro',
      },
    ]);
    assert.deepEqual(
      problems({ model_id: mini, text: null }).map((p) => p.field),
      ['text'],
    );
  });

  it('counts characters as code points, so 50 characters with emoji are enough and 100000 are not too many', () => {
    assert.ok(checkSubmission({ model_id: mini, text: `Hi${'😀'.repeat(48)}` }).ok);
    // Spaced: 100,000 characters without a space would be one run with nothing to read (long-tokens.ts).
    assert.ok(checkSubmission({ model_id: mini, text: `Hi${' 😀'.repeat(49_999)}` }).ok);
    assert.equal(checkSubmission({ model_id: mini, text: `Hi${'😀'.repeat(47)}` }).ok, false);
    assert.equal(checkSubmission({ model_id: mini, text: `Hi${' 😀'.repeat(49_999)}😀` }).ok, false);
  });

  it('refuses text with nothing to read: only emoji, or padded to length with NULs and zero-width characters', () => {
    assert.match(
      problems({ model_id: mini, text: '😀'.repeat(60_000) })[0]?.message ?? '',
      /^text has nothing to read aloud: it has no letters or digits$/,
    );
    assert.match(problems({ model_id: mini, text: `Hello${'\u0000'.repeat(60)}` })[0]?.message ?? '', /\(it has 5\)/);
    assert.match(
      problems({ model_id: mini, text: `Hello${'\u200b\u200d\ufeff'.repeat(30)}` })[0]?.message ?? '',
      /\(it has 5\)/,
    );
  });

  it('reports the body as a whole when it is not an object, or gives neither or both of url and text', () => {
    for (const body of [null, [], 'text', 42, true])
      assert.match(problems(body)[0]?.message ?? '', /^the request must be an object/);
    assert.deepEqual(
      problems({ model_id: mini }).map((p) => p.field),
      ['text'],
    );
    assert.match(problems({ model_id: mini })[0]?.message ?? '', /exactly one of url and text/);
    assert.deepEqual(
      problems({ model_id: mini, url: 'https://a.example', text: articleText() }).map((p) => p.field),
      ['url'],
    );
    assert.match(
      problems({ model_id: mini, url: 'https://a.example', text: articleText() })[0]?.message ?? '',
      /together with text/,
    );
  });

  it('refuses URLs that are not absolute http(s), are too long, or carry credentials', () => {
    for (const url of [
      '',
      'example.com',
      '/relative',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'data:text/plain,hi',
      `https://a.example/${'x'.repeat(2048)}`,
      'https://user:pw@a.example/',
    ]) {
      assert.deepEqual(
        problems({ model_id: mini, url }).map((p) => p.field),
        ['url'],
        url.slice(0, 40),
      );
    }
  });

  it('takes text of 50 to 100000 characters after trimming, and nothing else', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_100 }), fc.integer({ min: 0, max: 5 }), (length, padding) => {
        // Words of nine letters: a run without spaces longer than 64 has nothing to read (long-tokens.ts).
        const words = Array.from({ length }, (_, i) => (i % 10 === 9 && i !== length - 1 ? ' ' : 'a')).join('');
        const text = `${' '.repeat(padding)}${words}${'\n'.repeat(padding)}`;
        const ok = checkSubmission({ model_id: mini, text }).ok;
        return ok === (length >= 50 && length <= 100_000);
      }),
      { numRuns: 200 },
    );
  });
});

describe('engine: tokens and job ids', () => {
  it('matches bearer tokens exactly and maps each to a stable owner id', () => {
    const ring = new TokenRing(['alpha-token', ' beta-token ', '']);
    assert.equal(ring.ownerOf('Bearer alpha-token'), ownerIdOf('alpha-token'));
    assert.equal(ring.ownerOf('bearer beta-token'), ownerIdOf('beta-token'));
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer alpha',
      'Bearer alpha-token2',
      'Basic alpha-token',
      'alpha-token',
      'Bearer alpha-token extra',
    ]) {
      assert.equal(ring.ownerOf(header), undefined, String(header));
    }
    assert.throws(() => new TokenRing([' ', '']), /No API tokens/);
  });

  it('accepts only job ids of the exact shape it makes', () => {
    for (let i = 0; i < 50; i++) assert.ok(isJobId(newJobId()));
    const id = newJobId();
    for (const bad of [
      id.toUpperCase(),
      `${id}x`,
      id.slice(1),
      `../${id.slice(3)}`,
      '..%2F..%2Fetc',
      id.replace(/-/g, '/'),
      '',
      `${id}\0`,
    ]) {
      assert.equal(isJobId(bad), false, bad);
    }
  });
});

describe('engine: progress throttle', () => {
  it('sends at most one value per interval, never a smaller one, and never 1 before success', async () => {
    const sent: number[] = [];
    const throttle = new ProgressThrottle(0.1, 50, (p) => sent.push(p));
    throttle.report(0.05);
    throttle.report(0.2);
    throttle.report(0.3);
    throttle.report(0.25);
    throttle.report(Number.NaN);
    assert.deepEqual(sent, [0.2]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.deepEqual(sent, [0.2, 0.3]);
    throttle.report(5);
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.deepEqual(sent, [0.2, 0.3, 0.99]);
    throttle.report(0.995);
    throttle.stop();
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.equal(sent.length, 3);
  });
});

describe('engine: job queue', () => {
  it('runs at most `concurrency` at once, in order, and refuses beyond the depth', async () => {
    const started: string[] = [];
    const releases = new Map<string, () => void>();
    let running = 0;
    let peak = 0;
    const queue = new JobQueue<{ id: string }>(2, 3, (entry) => {
      started.push(entry.id);
      running++;
      peak = Math.max(peak, running);
      return new Promise<void>((resolve) =>
        releases.set(entry.id, () => {
          running--;
          resolve();
        }),
      );
    });
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      assert.ok(queue.reserve(), id);
      queue.enqueue({ id }, true);
    }
    assert.equal(queue.reserve(), false, 'a sixth job fits in a queue of depth 3 with 2 running');
    assert.deepEqual(started, ['a', 'b']);
    assert.ok(queue.remove('d'));
    assert.equal(queue.remove('a'), false);
    releases.get('a')?.();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(started, ['a', 'b', 'c']);
    releases.get('b')?.();
    releases.get('c')?.();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(started, ['a', 'b', 'c', 'e']);
    releases.get('e')?.();
    await queue.idle();
    assert.equal(peak, 2);
    assert.ok(queue.retryAfterSeconds() >= 1);
  });
});

describe('engine: process settings', () => {
  it('reads flags before environment variables, converting seconds to milliseconds', () => {
    const settings = readEngineSettings(
      ['--port', '9000', '--heartbeat-s', '0.5', '--queue-depth', '7', '--data-dir', 'rel/dir', '--exit-with-stdin'],
      {
        ARTICLE_AUDIO_TOKENS: 'one, two,,',
        ARTICLE_AUDIO_PORT: '1',
        ARTICLE_AUDIO_CONCURRENCY: '3',
        ARTICLE_AUDIO_FETCH_TIMEOUT_S: '2.5',
      },
      { port: 8787 },
    );
    assert.equal(settings.engine.port, 9000);
    assert.equal(settings.engine.heartbeatMs, 500);
    assert.equal(settings.engine.queueDepth, 7);
    assert.equal(settings.engine.concurrency, 3);
    assert.deepEqual(settings.engine.fetchLimits, { timeoutMs: 2500 });
    assert.deepEqual(settings.engine.tokens, ['one', 'two']);
    assert.equal(settings.engine.dataDir, path.resolve('rel/dir'));
    assert.equal(settings.exitWithStdin, true);
    assert.equal(settings.logLevel, 'info');
    assert.equal(readEngineSettings([], { ARTICLE_AUDIO_TOKENS: 'x' }, { port: 8787 }).engine.port, 8787);
  });

  it('reads tokens from a file too', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-settings-'));
    try {
      writeFileSync(path.join(dir, 'tokens'), 'first\r\nsecond\n\n');
      const settings = readEngineSettings(['--tokens-file', path.join(dir, 'tokens')], {}, { port: 0 });
      assert.deepEqual(settings.engine.tokens, ['first', 'second']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('explains what is wrong with bad settings', () => {
    const env = { ARTICLE_AUDIO_TOKENS: 'x' };
    const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
      [[], {}, /No API tokens: set ARTICLE_AUDIO_TOKENS/],
      [['--port', 'eighty'], env, /--port must be a whole number/],
      [['--port', '70000'], env, /--port must be 0 to 65535/],
      [['--heartbeat-s=-1'], env, /--heartbeat-s must be a positive number of seconds/],
      [['--retention-s', '0'], env, /--retention-s must be a positive number of seconds/],
      [[], { ...env, ARTICLE_AUDIO_QUEUE_DEPTH: 'lots' }, /ARTICLE_AUDIO_QUEUE_DEPTH must be a whole number/],
      [['--log-level', 'loud'], env, /--log-level must be one of/],
      [['--bogus'], env, /Unknown option '--bogus'/],
      [['--tokens-file', '/nonexistent/tokens'], {}, /Cannot read the tokens file/],
    ];
    for (const [args, environment, message] of cases) {
      assert.throws(
        () => readEngineSettings(args, environment, { port: 0 }),
        (error: unknown) => error instanceof UsageError && message.test(error.message),
        args.join(' '),
      );
    }
  });
});
