// The machine a run happened on, for BENCHMARKS.md: numbers mean little without it.
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export interface Machine {
  cores: number;
  cpu: string;
  memoryGb: number;
  node: string;
  os: string;
}

export function describeMachine(): Machine {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    const lscpu = execFileSync('lscpu', { encoding: 'utf8' });
    cpu = /^Model name:\s*(.+)$/m.exec(lscpu)?.[1]?.trim() ?? cpu;
  } catch {
    // lscpu is not everywhere; os.cpus() said something already
  }
  return {
    cores: os.availableParallelism(),
    cpu,
    memoryGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

export function machineText(machine: Machine): string {
  return `${machine.cores} cores (nproc), ${machine.cpu}, ${machine.memoryGb} GB memory, Node ${machine.node}, ${machine.os}`;
}
