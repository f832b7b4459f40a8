// Messages between a job's pipeline (the engine's main thread) and its audio worker (audio-worker.ts).
import type { TagRequest } from './id3';

/** One part of a job's audio: whole MP3 frames, a contiguous slice of the job's one MP3 stream. */
export interface PartFile {
  index: number;
  /** File name in the part folder. */
  name: string;
  /** Where the part starts in the job's audio, seconds. */
  startS: number;
  durationS: number;
  bytes: number;
}

export type AudioRequest =
  | {
      seq: number;
      op: 'open';
      path: string;
      partsDir: string;
      sampleRate: number;
      bitrate: number;
      quality: number;
      partTargetsS: number[];
    }
  /** Audio already at the job's rate and level (intro, outro), written as is. */
  | { seq: number; op: 'clip'; samples: Float32Array }
  | { seq: number; op: 'silence'; seconds: number }
  /** One synthesized line: trimmed, levelled, with its pauses; may close a part after it. */
  | { seq: number; op: 'line'; samples: Int16Array; sampleRate: number; pauseBeforeS: number; pauseAfterS: number }
  /** `tags`: the ID3 tag put before the audio (title, source, chapters with their times). */
  | { seq: number; op: 'finish'; tags?: TagRequest }
  | { seq: number; op: 'abort' }
  /**
   * The job is over (finished, aborted or failed): the worker drops the job's state and buffers, collects its
   * garbage and says how much memory it still holds, so that it can be kept for the next job (job-audio.ts).
   */
  | { seq: number; op: 'release' };

export interface LineWritten {
  /** Where the speech of the line starts and ends in the job's audio, seconds (pauses excluded). */
  start: number;
  end: number;
  /** Seconds of silence cut from the front of the line's samples (word times move by as much). */
  trimmedS: number;
  /** A part closed after this line. */
  part?: PartFile;
}

export interface AudioFinished {
  durationS: number;
  bytes: number;
  /** The last part (whatever was encoded since the part before it). */
  part?: PartFile;
}

/** What a worker still holds once released: its heap and the buffers outside it, in bytes. */
export interface AudioReleased {
  heapBytes: number;
}

export type AudioResponse =
  | { seq: number; ok: true; result?: LineWritten | AudioFinished | AudioReleased }
  | {
      seq: number;
      ok: false;
      error: string;
      /** The system error code (ENOSPC…), so a full disk stays storage_failed. */ code?: string;
    };
