// Runs HTML extraction, Markdown parsing and intro/outro decoding in a worker thread, one task at a time per thread,
// with a time limit and a memory limit (the thread's heap). A task past either limit has its thread ended and fails
// with `too_complex` (intro/outro: `intro_unusable`/`outro_unusable`), while the main thread goes on serving HTTP and
// every other job.
//
// Starting a thread and loading its code costs about 150 ms of CPU (a profile of 20 short jobs: 225 ms a task, most
// of it Node's start-up and the bundle's compilation), more than a short job's parse itself, and the first part waits
// for it. So the engine's runner keeps one thread that answered for the next task (THREAD_REUSE): idle for 30 s, or
// grown past 64 MB of heap (a PDF), or after 200 tasks, it is ended, and gives back all its memory. A
// thread that was stopped (time, memory, a cancelled job) or failed is never kept. Other runners (the extension's PDF
// reader, tests) end each thread after its task.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Article } from '../source/article';
import type { ArticleFacts } from '../text/article-facts';
import type { ParseAnswer, ParseRequest, ParseResponse, ParseStage, Script, ScriptHead } from './parse-protocol';
import { type EngineModelId, PipelineError } from '../types';

export interface ParseLimits {
  /** Wall-clock time one task may take. */
  timeoutMs: number;
  /** The worker's JavaScript heap, in MB. */
  memoryMb: number;
  /** Element nesting of a page refused before parsing. */
  maxHtmlDepth: number;
  /** Quote and list nesting of Markdown refused before parsing. */
  maxMarkdownDepth: number;
  /** Longest intro or outro, in seconds. */
  maxClipSeconds: number;
}

/**
 * Real pages nest 20-60 elements deep and rarely pass 150 (a browser's parser stops nesting at 512); Readability's
 * cost grows with the square of depth (400 deep: about 0.5 s), so 400 keeps every real page and refuses the bombs.
 * Markdown nests quotes and lists a few levels; marked overflows the stack on ~2000 and lists slow down
 * quadratically (200 deep: 0.1 s, 1000 deep: 10 s). A 6.7 MB page of real article markup extracts in a 256 MB heap
 * (and fails in 128 MB); it takes over a minute on a loaded 2-core machine, so the time limit ends it first anyway.
 */
export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  timeoutMs: 30_000,
  memoryMb: 256,
  maxHtmlDepth: 400,
  maxMarkdownDepth: 100,
  maxClipSeconds: 180,
};

/** Which threads a runner keeps for its next tasks (see the file's comment). */
export interface ThreadReuse {
  /** Idle threads kept. */
  maxIdle: number;
  /** An idle thread is ended after this long. */
  idleMs: number;
  /** A thread whose heap (with the buffers it holds outside it) is larger than this once it has answered is ended. */
  maxHeapBytes: number;
  /** Tasks a thread runs before it is ended. */
  maxTasks: number;
}

/**
 * The engine's: one thread kept, as jobs come one after another (several at once start threads of their own). Heaps
 * measured after a task: Markdown 18 MB (a 99,000-character article: 32 MB), the pages of test/fixtures/pages 35-40
 * MB, a PDF (pdf.js loaded) 105 MB, so a thread that read a PDF is ended.
 */
export const THREAD_REUSE: ThreadReuse = { maxIdle: 1, idleMs: 30_000, maxHeapBytes: 64 * 1024 * 1024, maxTasks: 200 };

/** A parse thread, with the task it runs now (none while it waits in the idle list). */
interface ParseThread {
  worker: Worker;
  /** Its code has loaded (it sent `ready`): a task is posted at once. */
  ready: boolean;
  tasks: number;
  /** The task's handlers; the thread's listeners call them. */
  onMessage?: (message: ParseAnswer | ParseStage) => void;
  onFailure?: (error: Error & { code?: string }) => void;
  ended: boolean;
  idleTimer?: NodeJS.Timeout;
}

function workerLocation(): { script: string; evaluate: boolean } {
  if (__filename.endsWith('.ts')) {
    // Tests run the sources through tsx; a worker needs tsx's require hook registered before it loads the .ts file.
    return {
      script: `require('tsx/cjs'); require(${JSON.stringify(path.join(__dirname, 'parse-worker.ts'))});`,
      evaluate: true,
    };
  }
  return { script: path.join(__dirname, 'parse-worker.js'), evaluate: false };
}

/** An article as a parse worker read it; its script and facts when a model was given (see ReadOptions.modelId). */
export interface ReadArticle {
  article: Article;
  script?: Script;
  facts?: ArticleFacts;
}

export interface ReadOptions {
  /**
   * Build the script for this model too, in the same thread (one thread start less before the first words), and work
   * out the article's facts (text/article-facts.ts) there.
   */
  modelId?: EngineModelId;
  /** Where the text came from (a page's host), kept on the article for the podcast's introduction. */
  sourceLabel?: string;
  /** Gets a long article, its facts and the first lines of its script while the rest is built. */
  onHead?: (article: Article, head: ScriptHead, facts: ArticleFacts) => void;
}

interface OverLimit {
  code: 'too_complex' | 'intro_unusable' | 'outro_unusable';
  what: string;
  advice: string;
}

const SCRIPT_OVER_LIMIT: OverLimit = {
  code: 'too_complex',
  what: 'Preparing the text for speech',
  advice:
    'The text is too unusual to read aloud safely (long runs of punctuation, digits or symbols can do that). Remove such runs, or convert a part of it.',
};

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

export class ParseRunner {
  private readonly idle: ParseThread[] = [];
  private closed = false;
  /** Threads started and tasks run, for checks that threads are kept and ended as they should be. */
  readonly counts = { threads: 0, tasks: 0 };

  /** `reuse`: keep threads for later tasks (the engine's runner); without it each thread ends after its task. */
  constructor(
    readonly limits: ParseLimits = DEFAULT_PARSE_LIMITS,
    private readonly reuse?: ThreadReuse,
  ) {}

  /** Ends the idle threads; later tasks still run, each in a thread of its own. */
  close(): Promise<void> {
    this.closed = true;
    return Promise.all(this.idle.splice(0).map((thread) => this.end(thread))).then(() => undefined);
  }

  /** The article of a web page; fails with not_an_article, fetch_failed (empty) or too_complex. */
  async extractHtml(html: string, pageUrl: string, signal: AbortSignal): Promise<Article> {
    return (await this.readPage(html, pageUrl, signal)).article;
  }

  /**
   * The article of a web page and, when `modelId` is given and its length suits a job, its script, built in the same
   * thread (one thread start less before the first words); each stage has its own time limit.
   */
  async readPage(html: string, pageUrl: string, signal: AbortSignal, options: ReadOptions = {}): Promise<ReadArticle> {
    const { modelId, onHead } = options;
    return this.readArticle(
      { kind: 'html', html, pageUrl, maxDepth: this.limits.maxHtmlDepth, ...(modelId ? { scriptFor: modelId } : {}) },
      signal,
      {
        code: 'too_complex',
        what: `Reading the page at ${pageUrl}`,
        advice:
          'The page is too large or too complex to read safely. Open the article in a browser, select its text and convert the selection instead.',
      },
      onHead,
    );
  }

  /** Markdown or plain text as an Article; fails with too_complex. `label` names the input ("The text"). */
  async parseMarkdown(source: string, label: string, signal: AbortSignal): Promise<Article> {
    return (await this.readText(source, label, signal)).article;
  }

  /** Markdown or plain text as an Article, and its script as readPage does. */
  async readText(source: string, label: string, signal: AbortSignal, options: ReadOptions = {}): Promise<ReadArticle> {
    const { modelId, sourceLabel, onHead } = options;
    return this.readArticle(
      {
        kind: 'markdown',
        source,
        maxDepth: this.limits.maxMarkdownDepth,
        label,
        ...(sourceLabel ? { sourceLabel } : {}),
        ...(modelId ? { scriptFor: modelId } : {}),
      },
      signal,
      {
        code: 'too_complex',
        what: `Reading ${label.replace(/^The /, 'the ')}`,
        advice:
          'Its markup is too complex to read safely (long runs of _, *, [ or > can do that). Remove such markup, send it as plain text, or convert a part of it.',
      },
      onHead,
    );
  }

  /**
   * A PDF's text as an Article (pdf-article.ts), and its script as readPage does; fails with not_an_article (no text
   * layer, a password, not a PDF) or too_complex.
   */
  async readPdf(
    bytes: Uint8Array,
    label: string,
    signal: AbortSignal,
    options: ReadOptions = {},
  ): Promise<ReadArticle> {
    const { modelId, sourceLabel, onHead } = options;
    return this.readArticle(
      {
        kind: 'pdf',
        bytes,
        label,
        ...(sourceLabel ? { sourceLabel } : {}),
        ...(modelId ? { scriptFor: modelId } : {}),
      },
      signal,
      {
        code: 'too_complex',
        what: `Reading ${label.replace(/^The /, 'the ')}`,
        advice:
          'The PDF is too large or too complex to read safely. Copy its text from a PDF viewer and convert that instead.',
      },
      onHead,
    );
  }

  /**
   * The script for speech (script.ts's buildScript): fast on prose (a 99,000-character article: under a second), but
   * the podcast's turns took minutes on text such as "a-" or "1," repeated 50,000 times (10,000 "a-": 4 s, growing
   * with the square of the length), so it runs here too; fails with too_complex.
   */
  async buildScript(article: Article, modelId: EngineModelId, signal: AbortSignal): Promise<Script> {
    const response = await this.run({ kind: 'script', article, modelId }, signal, SCRIPT_OVER_LIMIT);
    if (!('script' in response) || !response.script) throw new Error('The parse worker answered without a script');
    return response.script;
  }

  /** An intro or outro, decoded, resampled to `sampleRate`, levelled and faded; fails with intro_/outro_unusable. */
  async prepareClip(
    bytes: Uint8Array,
    which: 'intro' | 'outro',
    url: string,
    sampleRate: number,
    signal: AbortSignal,
  ): Promise<Float32Array> {
    const response = await this.run(
      { kind: 'clip', bytes, which, url, sampleRate, maxSeconds: this.limits.maxClipSeconds },
      signal,
      {
        code: which === 'intro' ? 'intro_unusable' : 'outro_unusable',
        what: `Decoding the ${which} audio at ${url}`,
        advice: `Use a short MP3, OGG or WAV file, or leave the ${which} out.`,
      },
    );
    if (!('samples' in response)) throw new Error('The parse worker answered without audio');
    return response.samples;
  }

  /** Runs a request that answers with an article (and its script). */
  private async readArticle(
    request: ParseRequest,
    signal: AbortSignal,
    overLimit: OverLimit,
    onHead?: ReadOptions['onHead'],
  ): Promise<ReadArticle> {
    const response = await this.run(request, signal, overLimit, onHead);
    if (!('article' in response)) throw new Error('The parse worker answered without an article');
    return response;
  }

  private run(
    request: ParseRequest,
    signal: AbortSignal,
    overLimit: OverLimit,
    onHead?: ReadOptions['onHead'],
  ): Promise<ParseResponse & { ok: true }> {
    signal.throwIfAborted();
    const { timeoutMs, memoryMb } = this.limits;
    const thread = this.take();
    this.counts.tasks++;
    thread.tasks++;
    return new Promise((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      /** `keep`: the thread answered, and may be kept for the next task. */
      const finish = (outcome: () => void, keep: { heapBytes?: number } | undefined = undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        thread.onMessage = undefined;
        thread.onFailure = undefined;
        if (keep) this.release(thread, keep.heapBytes);
        else void this.end(thread);
        outcome();
      };
      const onAbort = () =>
        finish(() =>
          reject(
            signal.reason instanceof Error ? signal.reason : new PipelineError('cancelled', 'The job was cancelled.'),
          ),
        );
      signal.addEventListener('abort', onAbort, { once: true });
      const startClock = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          finish(() =>
            reject(
              new PipelineError(
                overLimit.code,
                `${overLimit.what} took longer than ${seconds(timeoutMs)}, so it was stopped. ${overLimit.advice}`,
              ),
            ),
          );
        }, timeoutMs);
      };
      thread.onMessage = (response) => {
        if ('stage' in response) {
          if (response.stage === 'head') {
            if (!settled) onHead?.(response.article, response.head, response.facts);
            return;
          }
          // The script stage gets a clock and a message of its own, as when it ran in a thread of its own.
          if (response.stage === 'script') overLimit = SCRIPT_OVER_LIMIT;
          startClock();
          if (response.stage === 'ready') thread.worker.postMessage(request);
          return;
        }
        const { heapBytes, ...answer } = response;
        // A failure that is a defect (no code) ends the thread: whatever went wrong may have left it unfit.
        const keep = answer.ok || answer.code ? { heapBytes } : undefined;
        finish(() => {
          if (answer.ok) resolve(answer);
          else if (answer.code) reject(new PipelineError(answer.code, answer.message));
          else reject(new Error(answer.message));
        }, keep);
      };
      thread.onFailure = (error) => {
        finish(() => {
          if (error.code === 'ERR_WORKER_OUT_OF_MEMORY' || error instanceof RangeError) {
            reject(
              new PipelineError(
                overLimit.code,
                `${overLimit.what} needed more than ${memoryMb} MB of memory, so it was stopped. ${overLimit.advice}`,
                { cause: error },
              ),
            );
          } else {
            reject(new Error(`The parse worker failed: ${error.message}`, { cause: error }));
          }
        });
      };
      // A kept thread has loaded its code: the task goes now, and its clock starts now.
      if (thread.ready) {
        startClock();
        thread.worker.postMessage(request);
      }
    });
  }

  /** An idle thread (the one that waited least), or a new one. */
  private take(): ParseThread {
    const kept = this.idle.pop();
    if (kept) {
      clearTimeout(kept.idleTimer);
      kept.worker.ref();
      return kept;
    }
    const { script, evaluate } = workerLocation();
    const { memoryMb } = this.limits;
    const worker = new Worker(script, {
      eval: evaluate,
      resourceLimits: {
        maxOldGenerationSizeMb: memoryMb,
        maxYoungGenerationSizeMb: Math.min(32, Math.max(4, Math.floor(memoryMb / 16))),
      },
      stdout: false,
      stderr: false,
    });
    this.counts.threads++;
    const thread: ParseThread = { worker, ready: false, tasks: 0, ended: false };
    worker.on('message', (message: ParseAnswer | ParseStage) => {
      if ('stage' in message && message.stage === 'ready') thread.ready = true;
      thread.onMessage?.(message);
    });
    worker.on('error', (error: Error & { code?: string }) => {
      this.forget(thread);
      thread.onFailure?.(error);
    });
    worker.on('exit', (code) => {
      this.forget(thread);
      thread.onFailure?.(new Error(`The parse worker stopped unexpectedly (exit code ${code})`));
    });
    return thread;
  }

  /** After an answer: kept idle if reuse allows it, ended otherwise. */
  private release(thread: ParseThread, heapBytes: number | undefined): void {
    const reuse = this.reuse;
    if (
      !reuse ||
      this.closed ||
      thread.ended ||
      this.idle.length >= reuse.maxIdle ||
      thread.tasks >= reuse.maxTasks ||
      heapBytes === undefined ||
      heapBytes > reuse.maxHeapBytes
    ) {
      void this.end(thread);
      return;
    }
    // An idle thread keeps no process alive, and is ended when it has waited idleMs.
    thread.worker.unref();
    thread.idleTimer = setTimeout(() => {
      const at = this.idle.indexOf(thread);
      if (at >= 0) this.idle.splice(at, 1);
      void this.end(thread);
    }, reuse.idleMs);
    thread.idleTimer.unref();
    this.idle.push(thread);
  }

  private forget(thread: ParseThread): void {
    thread.ended = true;
    clearTimeout(thread.idleTimer);
    const at = this.idle.indexOf(thread);
    if (at >= 0) this.idle.splice(at, 1);
  }

  private async end(thread: ParseThread): Promise<void> {
    this.forget(thread);
    await thread.worker.terminate();
  }
}
