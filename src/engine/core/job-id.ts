// Job ids are random UUIDs. They name folders on disk, so anything that is not exactly this shape is rejected
// before it can reach a path: no decoding, no normalising, no case folding.
import { randomUUID } from 'node:crypto';

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function newJobId(): string {
  return randomUUID();
}

export function isJobId(value: string): boolean {
  return value.length === 36 && JOB_ID.test(value);
}
