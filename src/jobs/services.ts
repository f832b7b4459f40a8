// What the job tracker needs from the rest of the extension, as small interfaces defined here (src/jobs sits below
// src/service in ARCHITECTURE.md's layers): the services jobs run on, a log, an event emitter and a key-value store.
// The extension hands in its ServiceConnection, log channel, vscode.EventEmitter and globalState; tests hand in plain
// Node ones.
import type { JobServiceClient } from '../api/index';

/** `local` for the built-in engine, else the remote base URL. Stored with each job. */
export type ServiceId = 'local' | (string & {});

/** The calls the tracker makes on a job-service client. */
export type JobClient = Pick<
  JobServiceClient,
  'submitArticle' | 'getJob' | 'followJob' | 'cancelJob' | 'downloadOutput'
>;

export interface JobServices {
  /** The service the settings name now. */
  current(): ServiceId;
  /** "the local engine", "audio.example.com". */
  describe(service?: ServiceId): string;
  /** A client for `service`; rejects with OtherServiceError when it is not the current one. */
  client(service?: ServiceId): Promise<JobClient>;
}

/** A job belongs to another service than the one the settings name now. */
export class OtherServiceError extends Error {
  static {
    this.prototype.name = 'OtherServiceError';
  }
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface JobLog {
  log(level: LogLevel, message: string): void;
}

export interface Disposable {
  dispose(): unknown;
}

/** The shape of vscode.EventEmitter that the tracker uses. */
export interface Emitter<T> {
  readonly event: (listener: (value: T) => unknown) => Disposable;
  fire(value: T): void;
  dispose(): void;
}

/** The shape of a vscode.Memento that the tracker uses. */
export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}
