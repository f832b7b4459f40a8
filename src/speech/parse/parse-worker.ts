// A parse worker thread: HTML extraction (Readability over linkedom), Markdown parsing (marked) and intro/outro
// decoding run here, never on the engine's main thread, so one hostile input cannot stop the engine from answering.
// The runner (parse-runner.ts) bounds each task's time and memory and ends the thread when either is exceeded; a
// thread that answered keeps its loaded code for the engine's next task (parse-runner.ts, ParseThreads).
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { TEXT_MAX_LENGTH, TEXT_MIN_LENGTH } from '../../protocol/text';
import { storableArticle, type Article } from '../source/article';
import { articleFacts } from '../text/article-facts';
import { htmlNestingDepth, markdownNestingDepth } from '../source/nesting';
import type { ParseAnswer, ParseRequest, ParseResponse, ParseStage } from './parse-protocol';
import type { EngineModelId } from '../types';
import { traceMemory } from '../threads/memory-trace';

// Each task loads only the code it needs (linkedom and Readability are most of this bundle): a thread may run only
// Markdown jobs, and loading everything would cost each new thread the HTML parser's start-up. `require`, not `import()`:
// the bundle defers a required module's evaluation the same way, and under tsx (tests) only the CommonJS hook is
// registered in the thread.
/* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports */
const load = {
  html: () => require('../source/html-article') as typeof import('../source/html-article'),
  markdown: () => require('../source/markdown') as typeof import('../source/markdown'),
  pdf: () => require('../source/pdf-article') as typeof import('../source/pdf-article'),
  clip: () => require('../audio/clip') as typeof import('../audio/clip'),
  script: () => require('../text/script') as typeof import('../text/script'),
};
/* eslint-enable @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports */

if (!parentPort) throw new Error('parse-worker.ts runs only as a worker thread');
const port = parentPort;

const SELECT_TEXT = 'Open the article in a browser, select its text and convert the selection instead.';

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Characters of an article's first blocks whose script is sent ahead (about 40 lines of speech). */
const HEAD_CHARACTERS = 3000;
/** Lines at the end of that script left out: they may come out differently in the whole script (a sign-off, a turn). */
const HEAD_SPARE_LINES = 6;

/** The article cut after its first blocks, or undefined when it is short enough to script at once. */
function headOf(article: Article): Article | undefined {
  let characters = 0;
  let blocks = 0;
  while (blocks < article.blocks.length && characters < HEAD_CHARACTERS)
    characters += JSON.stringify(article.blocks[blocks++]).length;
  // A little beyond the head: the whole script is fast then, and it would be all of it anyway.
  if (article.blocks.length < blocks * 2) return undefined;
  return { ...article, blocks: article.blocks.slice(0, blocks) };
}

/**
 * The article, and its script when asked for: building it in the thread that read the article saves starting a
 * second thread before the first words can be synthesized. An article whose length a job refuses gets no script (the
 * pipeline says why), so a huge page costs no normalization.
 */
function withScript(read: Article, modelId: EngineModelId | undefined): ParseResponse {
  const article = storableArticle(read);
  if (!modelId) return { ok: true, article };
  // What the pipeline checks before it speaks (length, readable text, words, language): passes over the whole text
  // that would otherwise hold the engine's main thread as a long job starts.
  const facts = articleFacts(article);
  const { characters } = facts;
  if (characters < TEXT_MIN_LENGTH || characters > TEXT_MAX_LENGTH) return { ok: true, article, facts };
  port.postMessage({ stage: 'script' } satisfies ParseStage);
  const { buildScript } = load.script();
  const prefix = headOf(article);
  if (prefix) {
    // A long article's first lines, from the script of its first blocks: speech can start on them while the whole
    // script is built (up to a second on 100,000 characters). The pipeline checks them against the whole script
    // before it publishes anything, so a head that came out different costs time, never a wrong part.
    const { profile, lines } = buildScript(prefix, modelId);
    const head = lines.slice(0, Math.max(1, lines.length - HEAD_SPARE_LINES));
    port.postMessage({ stage: 'head', article, head: { profile, lines: head }, facts } satisfies ParseStage);
  }
  return { ok: true, article, script: buildScript(article, modelId), facts };
}

async function handle(request: ParseRequest): Promise<ParseResponse> {
  if (request.kind === 'html') {
    const { html, pageUrl, maxDepth } = request;
    if (html.trim() === '')
      return {
        ok: false,
        code: 'fetch_failed',
        message: `${pageUrl} answered with an empty page. Check that it opens in a browser, or paste the article's text instead.`,
      };
    if (!/<[a-zA-Z]/.test(html)) {
      return {
        ok: false,
        code: 'not_an_article',
        message: `The page at ${pageUrl} has no HTML elements (it is plain text or broken markup sent as a web page). ${SELECT_TEXT}`,
      };
    }
    const depth = htmlNestingDepth(html, maxDepth);
    if (depth > maxDepth) {
      return {
        ok: false,
        code: 'too_complex',
        message: `The page at ${pageUrl} nests its elements more than ${maxDepth} deep, too deep to read safely. ${SELECT_TEXT}`,
      };
    }
    const { extractHtmlArticle } = load.html();
    let extracted;
    try {
      extracted = extractHtmlArticle(html, pageUrl);
    } catch (error) {
      if (error instanceof RangeError)
        return {
          ok: false,
          code: 'too_complex',
          message: `The page at ${pageUrl} is too complex to read (${describe(error)}). ${SELECT_TEXT}`,
        };
      return {
        ok: false,
        code: 'not_an_article',
        message: `The page at ${pageUrl} could not be read as an article (${describe(error)}). ${SELECT_TEXT}`,
      };
    }
    if (!extracted || extracted.article.blocks.length === 0) {
      return {
        ok: false,
        code: 'not_an_article',
        message: `The page at ${pageUrl} has no readable article (it looks like a list of links or an app). Open the article itself, or paste its text instead.`,
      };
    }
    return withScript(extracted.article, request.scriptFor);
  }
  if (request.kind === 'markdown') {
    const { source, maxDepth, label } = request;
    const depth = markdownNestingDepth(source, maxDepth);
    if (depth > maxDepth) {
      return {
        ok: false,
        code: 'too_complex',
        message: `${label} nests quotes or lists more than ${maxDepth} levels deep, too deep to read safely. Remove the extra ">" marks or indentation, or convert a part of it.`,
      };
    }
    const { parseMarkdown } = load.markdown();
    let article: Article;
    try {
      article = parseMarkdown(source);
      if (request.sourceLabel) article.sourceLabel = request.sourceLabel;
    } catch (error) {
      if (error instanceof RangeError)
        return {
          ok: false,
          code: 'too_complex',
          message: `${label} is too complex to read (${describe(error)}). Remove unusual markup, or convert a part of it.`,
        };
      throw error;
    }
    return withScript(article, request.scriptFor);
  }
  if (request.kind === 'pdf') {
    const { extractPdfArticle, PdfProblem } = load.pdf();
    try {
      const { article } = await extractPdfArticle(request.bytes, request.label);
      if (request.sourceLabel) article.sourceLabel = request.sourceLabel;
      return withScript(article, request.scriptFor);
    } catch (error) {
      if (error instanceof PdfProblem) return { ok: false, code: 'not_an_article', message: error.message };
      if (error instanceof RangeError)
        return {
          ok: false,
          code: 'too_complex',
          message: `${request.label} is too complex to read (${describe(error)}). Copy its text from a PDF viewer and convert that instead.`,
        };
      throw error;
    }
  }
  if (request.kind === 'script')
    return { ok: true, script: load.script().buildScript(request.article, request.modelId) };
  const { bytes, which, url, sampleRate, maxSeconds } = request;
  const { ClipProblem, prepareClip } = load.clip();
  try {
    return { ok: true, samples: await prepareClip(bytes, which, sampleRate, { maxSeconds }) };
  } catch (error) {
    const problem = error instanceof ClipProblem ? error : undefined;
    const reason = problem?.message ?? `it could not be decoded (${describe(error)})`;
    const advice = problem?.advice ?? `Use an MP3, OGG or WAV file${problem ? '' : ' that plays in a browser'}`;
    return {
      ok: false,
      code: which === 'intro' ? 'intro_unusable' : 'outro_unusable',
      message: `The ${which} audio at ${url} cannot be used: ${reason}. ${advice}, or leave the ${which} out.`,
    };
  }
}

/**
 * The thread's memory now: V8's committed heap and the buffers its objects hold outside it (a PDF's bytes, decoded
 * audio). The runner keeps a thread for the next task only while it is small.
 */
function heapBytes(): number {
  const { total_heap_size: heap, external_memory: external } = getHeapStatistics();
  return heap + external;
}

// The runner starts the task's clock when the thread has loaded its code, so a slow start on a loaded machine does
// not eat into the time a page may take. A thread may be given more tasks, one after the other (the runner sends the
// next only once this one has answered).
port.postMessage({ stage: 'ready' } satisfies ParseStage);
port.on('message', (request: ParseRequest) => {
  handle(request).then(
    (response) =>
      port.postMessage(
        { ...response, heapBytes: heapBytes() },
        'samples' in response && response.ok ? [response.samples.buffer as ArrayBuffer] : [],
      ),
    (error: unknown) =>
      port.postMessage({ ok: false, message: describe(error), heapBytes: heapBytes() } satisfies ParseAnswer),
  );
});

traceMemory('parse');
