// Exit codes of the `article-audio` command, so scripts can tell what went wrong.
export const EXIT = {
  ok: 0,
  /** Something unexpected (a bug, a disk error). */
  failure: 1,
  /** Bad arguments or unusable input: unknown option, missing file, text too short or too long. */
  usage: 2,
  /** The service refused the request: wrong or missing API key, validation failure, queue full. */
  refused: 3,
  /** The service could not be reached, failed (5xx, or sent what the client refuses), or did not answer in time. */
  network: 4,
  /** The job ran and failed (the service's error code is printed). */
  jobFailed: 5,
  /** Stopped by Ctrl+C (the job was cancelled). */
  interrupted: 130,
} as const;

export const EXIT_CODES_HELP = `Exit codes:
  0    done
  1    unexpected failure
  2    bad arguments or unusable input (missing file, text too short or too long)
  3    the service refused the request (API key, validation, queue full)
  4    the service could not be reached, failed (5xx, or sent what the client refuses) or did not answer in time
  5    the job failed (its error code is printed)
  130  interrupted with Ctrl+C (the job is cancelled)`;
