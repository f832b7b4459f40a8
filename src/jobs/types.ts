// The extension's record of a job, shared by the jobs model, the views and the player.
import type { JobStatus, ModelId } from '../api/types';

export type JobSourceKind = 'selection' | 'document' | 'url';

export interface JobSource {
  kind: JobSourceKind;
  /** The document the text came from (selection and document jobs), as a URI string. */
  documentUri?: string;
  /** For selection jobs: where the selection was, so read-along can highlight in the editor. */
  range?: { startLine: number; startCharacter: number; endLine: number; endCharacter: number };
  /** For URL jobs. */
  url?: string;
}

/** Files of a finished job, downloaded into the extension's audio cache (absolute paths). */
export interface CachedJobFiles {
  audio: string;
  transcript?: string;
  chapters?: string;
  article?: string;
}

/** A part of a running job's audio, downloaded into the job's cache folder (absolute paths). */
export interface CachedPart {
  index: number;
  /** Where the part starts in the final audio, seconds. */
  startS: number;
  durationS: number;
  final: boolean;
  audio: string;
  transcript?: string;
}

export interface JobRecord {
  /** The service's job id. */
  id: string;
  title: string;
  modelId: ModelId;
  /** 'local' for the built-in engine (its port changes on every start), else the remote base URL. */
  service: 'local' | (string & {});
  source: JobSource;
  status: JobStatus;
  progress?: number;
  /** ISO 8601. */
  createdAt: string;
  updatedAt: string;
  finishedAt?: string;
  error?: { code?: string; message?: string };
  durationS?: number;
  files?: CachedJobFiles;
  /** Submitted from this VS Code (not only seen in the list): its end is announced, even after a reload. */
  startedHere?: boolean;
  /** Parts of the audio downloaded while the job runs, in order from index 0 without gaps. */
  parts?: CachedPart[];
  /** The player is playing this job's parts while the service still converts it (not persisted). */
  playingWhileConverting?: boolean;
  /** The last log message, for tooltips. */
  lastMessage?: string;
}

/** What the player needs from the jobs model. */
export interface PlayableJobs {
  get(id: string): JobRecord | undefined;
  /** Jobs whose audio is in the cache (finished, or running with parts already here), newest first. */
  playable(): JobRecord[];
  /** The player says whether it is playing a running job's parts (the views say "playing while converting"). */
  setPlayingWhileConverting(id: string, playing: boolean): void;
  readonly onDidChange: (listener: (job: JobRecord | undefined) => unknown) => { dispose(): unknown };
}
