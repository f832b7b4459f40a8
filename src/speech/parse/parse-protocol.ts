// Messages between the pipeline (parse-runner.ts) and a parse worker thread (parse-worker.ts): a request, its
// response, then the next request or the end of the thread.
import type { Article } from '../source/article';
import type { ArticleFacts } from '../text/article-facts';
import type { ModelProfile, ScriptLine } from '../text/profiles';
import type { EngineModelId, PipelineErrorCode } from '../types';

/** What buildScript (script.ts) returns. */
export interface Script {
  profile: ModelProfile;
  lines: ScriptLine[];
  sections: number;
}

export type ParseRequest =
  | {
      kind: 'html';
      html: string;
      pageUrl: string;
      /** Element nesting beyond this is refused before parsing. */
      maxDepth: number;
      /** Build the script for this model in the same thread once the article is read (see ScriptFor). */
      scriptFor?: EngineModelId;
    }
  | {
      kind: 'markdown';
      source: string;
      /** Quote and list nesting beyond this is refused before parsing. */
      maxDepth: number;
      /** How messages name the input: "The text", "The page at https://…". */
      label: string;
      /** Where the text came from (a page's host), kept on the article for the podcast's introduction. */
      sourceLabel?: string;
      scriptFor?: EngineModelId;
    }
  | {
      /** A PDF document, read by pdf.js (source/pdf-article.ts). */
      kind: 'pdf';
      bytes: Uint8Array;
      /** How messages name the input: "The PDF at https://…". */
      label: string;
      sourceLabel?: string;
      scriptFor?: EngineModelId;
    }
  | {
      /** The text for speech: normalization and sentence splitting (script.ts), which pathological text slows down. */
      kind: 'script';
      article: Article;
      modelId: EngineModelId;
    }
  | {
      kind: 'clip';
      bytes: Uint8Array;
      which: 'intro' | 'outro';
      url: string;
      sampleRate: number;
      maxSeconds: number;
    };

export type ParseResponse =
  /**
   * `script` when the request asked for one and the article's length is within the limits of a job; `facts` whenever
   * it asked for a script (what the pipeline checks before speaking, worked out here, off the engine's main thread).
   */
  | { ok: true; article: Article; script?: Script; facts?: ArticleFacts }
  | { ok: true; samples: Float32Array }
  | { ok: true; script: Script }
  | { ok: false; code: PipelineErrorCode; message: string }
  /** A failure that is a defect, not the input's fault: the job fails as `internal`. */
  | { ok: false; code?: undefined; message: string };

/** A response as the worker sends it: with its heap's size then, for the runner's choice to keep the thread. */
export type ParseAnswer = ParseResponse & { heapBytes?: number };

/** The first lines of a long article's script, sent before the whole script is built. */
export interface ScriptHead {
  profile: ModelProfile;
  lines: ScriptLine[];
}

/**
 * Sent by the worker as it goes: `ready` when its code has loaded (the runner then sends the request and starts the
 * clock), `script` when it starts building the script of the article it has read (a new clock, and a failure is then
 * the script's), `head` with the article, its facts and the first lines of its script while the rest is built.
 */
export type ParseStage =
  { stage: 'ready' | 'script' } | { stage: 'head'; article: Article; head: ScriptHead; facts: ArticleFacts };
