// The engine's logger: a leaf that every part imports (the orchestrators never own its type).
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Structured fields of a log line (a team node writes them as JSON keys, the embedded engine as key=value after the
 * message). Names in use: job_id, token (the token's name, never its value), worker, run (the attempt number of a
 * job's run), request_id (the X-Request-Id of the request that submitted the job), state (of a job: queued,
 * running, succeeded, failed, cancelled), code (of a failure). Undefined values are left out.
 */
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

export type Logger = (level: LogLevel, message: string, fields?: LogFields) => void;

/** The fields as ` key=value` pairs for a text log line (values with spaces or quotes are JSON-quoted). */
export function textFields(fields: LogFields | undefined): string {
  if (!fields) return '';
  let out = '';
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const text = String(value);
    out += ` ${key}=${/^[^\s"=]+$/.test(text) ? text : JSON.stringify(text)}`;
  }
  return out;
}

/** The defined fields only, for a JSON log line. */
export function definedFields(fields: LogFields | undefined): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  if (fields) for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out;
}
