// Messages between the pipeline (parse-runner.ts) and a parse worker thread (parse-worker.ts): one request, one
// response, then the worker is ended.
import type { Article } from './article';
import type { ModelProfile, ScriptLine } from './script';
import type { EngineModelId, PipelineErrorCode } from './types';

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
    }
  | {
      kind: 'markdown';
      source: string;
      /** Quote and list nesting beyond this is refused before parsing. */
      maxDepth: number;
      /** How messages name the input: "The text", "The page at https://…". */
      label: string;
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
  | { ok: true; article: Article }
  | { ok: true; samples: Float32Array }
  | { ok: true; script: Script }
  | { ok: false; code: PipelineErrorCode; message: string }
  /** A failure that is a defect, not the input's fault: the job fails as `internal`. */
  | { ok: false; code?: undefined; message: string };
