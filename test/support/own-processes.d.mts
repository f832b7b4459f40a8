import type { ChildProcess } from 'node:child_process';

export const RUN_MARKER: 'AA_TEST_RUN_ID';
export function markerEnv(): Record<string, string>;
export function ownProcess<T extends ChildProcess>(child: T, options?: { group?: boolean }): T;
