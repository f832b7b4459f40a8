// Runs HTML extraction, Markdown parsing and intro/outro decoding in a worker thread of their own, one thread per
// task, with a time limit and a memory limit (the thread's heap). A task past either limit has its thread ended and
// fails with `too_complex` (intro/outro: `intro_unusable`/`outro_unusable`), while the main thread goes on serving
// HTTP and every other job. A thread per task costs tens of milliseconds to start, which is nothing beside a fetch
// or synthesis, and gives back all its memory when it ends.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Article } from '../source/article';
import type { ArticleFacts } from '../text/article-facts';
import type { ParseRequest, ParseResponse, ParseStage, Script, ScriptHead } from './parse-protocol';
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
  constructor(readonly limits: ParseLimits = DEFAULT_PARSE_LIMITS) {}

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
    const { script, evaluate } = workerLocation();
    const { timeoutMs, memoryMb } = this.limits;
    return new Promise((resolve, reject) => {
      const worker = new Worker(script, {
        eval: evaluate,
        resourceLimits: {
          maxOldGenerationSizeMb: memoryMb,
          maxYoungGenerationSizeMb: Math.min(32, Math.max(4, Math.floor(memoryMb / 16))),
        },
        stdout: false,
        stderr: false,
      });
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        void worker.terminate();
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
      worker.on('message', (response: ParseResponse | ParseStage) => {
        if ('stage' in response) {
          if (response.stage === 'head') {
            if (!settled) onHead?.(response.article, response.head, response.facts);
            return;
          }
          // The script stage gets a clock and a message of its own, as when it ran in a thread of its own.
          if (response.stage === 'script') overLimit = SCRIPT_OVER_LIMIT;
          startClock();
          if (response.stage === 'ready') worker.postMessage(request);
          return;
        }
        finish(() => {
          if (response.ok) resolve(response);
          else if (response.code) reject(new PipelineError(response.code, response.message));
          else reject(new Error(response.message));
        });
      });
      worker.on('error', (error: Error & { code?: string }) => {
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
      });
      worker.on('exit', (code) =>
        finish(() => reject(new Error(`The parse worker stopped unexpectedly (exit code ${code})`))),
      );
    });
  }
}
