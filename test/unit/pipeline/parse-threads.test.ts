// The engine's parse runner keeps a thread that answered for the next task (parse-runner.ts, THREAD_REUSE), and
// never one that was stopped, failed, grew too large, ran its share of tasks or waited too long. Real worker threads;
// `counts.threads` is how many the runner started.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_PARSE_LIMITS,
  type ParseLimits,
  ParseRunner,
  THREAD_REUSE,
  type ThreadReuse,
} from '../../../src/speech/parse/parse-runner';
import { PipelineError } from '../../../src/speech/types';

const signal = new AbortController().signal;
const SHORT = '# A note\n\nThe river town woke early. Boats left before the sun rose.';

function runner(reuse: Partial<ThreadReuse> = {}, limits: Partial<ParseLimits> = {}) {
  const parseLimits: ParseLimits = { ...DEFAULT_PARSE_LIMITS, ...limits };
  return { parseLimits, runner: new ParseRunner(parseLimits, { ...THREAD_REUSE, ...reuse }) };
}

async function readShort(parser: ParseRunner, text = SHORT): Promise<string> {
  const { article, script } = await parser.readText(text, 'The text', signal, { modelId: 'article-audio-1-mini' });
  assert.ok(script, 'a script was built');
  return article.title ?? '';
}

describe('parse threads kept between tasks', () => {
  it('runs tasks one after another in one thread, each with its own answer', async () => {
    const { runner: parser } = runner();
    try {
      assert.equal(await readShort(parser), 'A note');
      assert.equal(
        await readShort(
          parser,
          '# Second\n\nAnother short text to read, about a harbour and the boats that left it before dawn.',
        ),
        'Second',
      );
      const page = await parser.extractHtml(
        '<html><head><title>Page</title></head><body><article><h1>Page</h1><p>A page of one paragraph, long enough to read aloud as an article.</p></article></body></html>',
        'http://127.0.0.1/page',
        signal,
      );
      assert.match(page.blocks.map((b) => ('text' in b ? b.text : '')).join(' '), /one paragraph/);
      assert.deepEqual(parser.counts, { threads: 1, tasks: 3 });
    } finally {
      await parser.close();
    }
  });

  it('keeps one thread when tasks ran at once, and starts a new one only when none is idle', async () => {
    const { runner: parser } = runner();
    try {
      await Promise.all([readShort(parser), readShort(parser)]);
      assert.equal(parser.counts.threads, 2);
      await readShort(parser);
      await readShort(parser);
      assert.deepEqual(parser.counts, { threads: 2, tasks: 4 }, 'the two later tasks ran in the thread kept');
    } finally {
      await parser.close();
    }
  });

  it('gives a kept thread the same time limit, and ends a thread that was stopped', async () => {
    const { parseLimits, runner: parser } = runner();
    try {
      await readShort(parser);
      // The kept thread has no `ready` to send: its clock starts with the task (1 ms: 100,000 characters take longer).
      parseLimits.timeoutMs = 1;
      await assert.rejects(
        parser.parseMarkdown('Word and word. '.repeat(6_666), 'The text', signal),
        (e: PipelineError) => e.code === 'too_complex' && /took longer than/.test(e.message),
      );
      assert.equal(parser.counts.threads, 1, 'the stopped task ran in the kept thread');
      parseLimits.timeoutMs = DEFAULT_PARSE_LIMITS.timeoutMs;
      await readShort(parser);
      assert.deepEqual(parser.counts, { threads: 2, tasks: 3 }, 'the stopped thread was not kept');
    } finally {
      await parser.close();
    }
  });

  it('gives a kept thread the same memory limit, and ends a thread that ran out of it', async () => {
    const { runner: parser } = runner({}, { memoryMb: 16, timeoutMs: 120_000 });
    try {
      await readShort(parser);
      await assert.rejects(
        parser.extractHtml(
          `<html><body><div>${'<p>word word word</p>'.repeat(400_000)}</div></body></html>`,
          'http://127.0.0.1/big',
          signal,
        ),
        (e: PipelineError) => e.code === 'too_complex' && /more than 16 MB/.test(e.message),
      );
      await readShort(parser);
      assert.deepEqual(parser.counts, { threads: 2, tasks: 3 });
    } finally {
      await parser.close();
    }
  });

  it('ends the thread of a cancelled task', async () => {
    const { runner: parser } = runner();
    try {
      await readShort(parser);
      const controller = new AbortController();
      const parsing = parser.parseMarkdown('_a_'.repeat(33_333), 'The text', controller.signal);
      controller.abort(new PipelineError('cancelled', 'The job was cancelled.'));
      await assert.rejects(parsing, (e: PipelineError) => e.code === 'cancelled');
      await readShort(parser);
      assert.deepEqual(parser.counts, { threads: 2, tasks: 3 });
    } finally {
      await parser.close();
    }
  });

  it('keeps a thread after an answer that refuses the input (not_an_article), as after any other answer', async () => {
    const { runner: parser } = runner();
    try {
      await assert.rejects(
        parser.extractHtml('<html><body></body></html>', 'http://127.0.0.1/empty', signal),
        (e: PipelineError) => e.code === 'not_an_article' || e.code === 'fetch_failed',
      );
      await readShort(parser);
      assert.deepEqual(parser.counts, { threads: 1, tasks: 2 });
    } finally {
      await parser.close();
    }
  });

  it('ends a thread whose heap is past the limit, that ran its tasks, or that waited too long', async () => {
    const small = runner({ maxHeapBytes: 1024 }).runner;
    await readShort(small);
    await readShort(small);
    assert.equal(small.counts.threads, 2, 'a heap past maxHeapBytes: not kept');
    await small.close();

    const few = runner({ maxTasks: 2 }).runner;
    for (let i = 0; i < 3; i++) await readShort(few);
    assert.equal(few.counts.threads, 2, 'after maxTasks a new thread');
    await few.close();

    const brief = runner({ idleMs: 50 }).runner;
    await readShort(brief);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await readShort(brief);
    assert.equal(brief.counts.threads, 2, 'an idle thread is ended after idleMs');
    await brief.close();
  });

  it('keeps nothing once closed, and a runner without reuse ends every thread', async () => {
    const { runner: parser } = runner();
    await readShort(parser);
    await parser.close();
    await readShort(parser);
    await readShort(parser);
    assert.equal(parser.counts.threads, 3, 'closed: each task in a thread of its own');

    const plain = new ParseRunner();
    await readShort(plain);
    await readShort(plain);
    assert.equal(plain.counts.threads, 2);
  });
});
