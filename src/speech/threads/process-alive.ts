import { readlinkSync } from 'node:fs';

// Whether a process with this id exists on this machine (signal 0 checks without sending anything). EPERM means it
// exists but belongs to another user.
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * This process's pid namespace (`pid:[4026531836]`; undefined off Linux): two processes see each other's pids only
 * in the same one (containers have their own, and may share a host name and a folder).
 */
export function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}
