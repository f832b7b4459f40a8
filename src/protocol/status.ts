// Job states (spec 3). A remote service may send others: a status is kept as a plain string beside these.

export const KNOWN_STATUSES = ['queued', 'processing', 'succeeded', 'failed'] as const;
export type KnownStatus = (typeof KNOWN_STATUSES)[number];
export type JobStatus = KnownStatus | (string & {});
export type TerminalStatus = 'succeeded' | 'failed';

export const isTerminalStatus = (status: JobStatus): status is TerminalStatus =>
  status === 'succeeded' || status === 'failed';
