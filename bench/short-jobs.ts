// Short jobs: what a job of two sentences costs the engine, and the parse thread's share of it.
//
// 1. A parse task of a short text (article and script, as a job's), in a thread started for it and in a thread kept
//    from the task before (ParseRunner with and without THREAD_REUSE, parse-runner.ts), alternated in the same run:
//    CPU per task of this process (the parse threads are its threads), and wall time per task.
//    The sources run under tsx here, so a started thread also compiles TypeScript: the ratio is larger than in the
//    bundle (a profile of the bundled engine: about 150 ms of a started thread's CPU is its start-up).
// 2. The engine process (dist/cli.js serve, started as the extension starts it), warmed up, running short jobs one
//    after another and four at a time: its CPU per job (all its threads, from /proc) and the wall time per job.
// 3. Engine starts: the process's CPU once it listens and 2 s later, and its minor page faults.
//    With BENCH_BASE_DIST=<another checkout's dist> 2 and 3 run on that build too, alternated round by round, with the
//    ratio:
//      git worktree add /tmp/base <commit> && ln -s "$PWD/node_modules" /tmp/base/ && (cd /tmp/base && node esbuild.mjs)
//      BENCH_BASE_DIST=/tmp/base/dist npm run bench -- short
// 4. The first part of a warm engine's jobs (Pro, the short article, one after another): seconds from the submission
//    to the first part's result event, median of the round, on the machine as it is and beside BUSY_LOOPS CPU-bound
//    processes started from this process (first-job.ts); with BENCH_BASE_DIST alternated with that build too.
import os from 'node:os';
import path from 'node:path';
import { ENGINE_ENV, ENGINE_NODE_FLAGS } from '../src/engine/process-tuning';
import { DEFAULT_PARSE_LIMITS, ParseRunner, THREAD_REUSE } from '../src/speech/parse/parse-runner';
import { startEngineProcess } from '../test/support/engine-process';
import { serviceCalls } from '../test/support/http-calls';
import { openStream } from '../test/support/sse-reader';
import { articleText } from './lib/articles';
import { firstPartOrEnd, minorFaults, processCpuS, warmUp } from './lib/engine-runs';
import { startBusyLoops } from './lib/first-job';
import { type Bench, type Row, percentile } from './lib/report';

const SHORT = 'A small note to read aloud. It has two short sentences and nothing else.';
const MODEL = 'article-audio-1-mini';
const load = () => os.loadavg()[0]!.toFixed(1);

async function parseTasks(runner: ParseRunner, count: number): Promise<{ cpuMs: number; wallMs: number }> {
  const signal = new AbortController().signal;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await runner.readText(`${SHORT} Task ${i}.`, 'The text', signal, { modelId: MODEL });
  const cpu = process.cpuUsage(cpu0);
  return { cpuMs: (cpu.user + cpu.system) / 1000 / count, wallMs: (performance.now() - t0) / count };
}

async function parseRows(rounds: number, perRound: number): Promise<Row[]> {
  const fresh = new ParseRunner(DEFAULT_PARSE_LIMITS);
  const kept = new ParseRunner(DEFAULT_PARSE_LIMITS, THREAD_REUSE);
  const totals = { fresh: { cpuMs: 0, wallMs: 0 }, kept: { cpuMs: 0, wallMs: 0 } };
  const loadBefore = load();
  // One task each first: the kept runner's thread, and the code both load from disk.
  await parseTasks(fresh, 1);
  await parseTasks(kept, 1);
  for (let round = 0; round < rounds; round++) {
    for (const [name, runner] of [
      ['fresh', fresh],
      ['kept', kept],
    ] as const) {
      const result = await parseTasks(runner, perRound);
      totals[name].cpuMs += result.cpuMs / rounds;
      totals[name].wallMs += result.wallMs / rounds;
    }
  }
  await kept.close();
  const note = `${rounds} rounds of ${perRound} tasks each, alternated; load ${loadBefore} -> ${load()}`;
  return [
    {
      bench: 'parse task, short text (article and script)',
      case: 'a thread started for the task (a runner without reuse)',
      result: `${totals.fresh.cpuMs.toFixed(0)} ms CPU, ${totals.fresh.wallMs.toFixed(0)} ms wall`,
      note,
    },
    {
      bench: 'parse task, short text (article and script)',
      case: 'the thread kept from the task before (the engine: THREAD_REUSE)',
      result: `${totals.kept.cpuMs.toFixed(0)} ms CPU, ${totals.kept.wallMs.toFixed(0)} ms wall`,
      note: `${(totals.fresh.cpuMs / totals.kept.cpuMs).toFixed(1)}x less CPU, ${(totals.fresh.wallMs / totals.kept.wallMs).toFixed(1)}x less wall than a thread per task; ${note}`,
    },
  ];
}

/** An engine process as the extension starts it: this checkout's `dist/cli.js`, or another build's `cli.js`. */
function startEngine(script: string | undefined) {
  return startEngineProcess({
    startTimeoutMs: 60_000,
    env: { ...ENGINE_ENV },
    nodeArgs: ENGINE_NODE_FLAGS,
    ...(script ? { script } : {}),
  });
}

/** Short jobs on one engine process: CPU (all its threads, from /proc) and wall time per job. */
async function shortJobsOn(script: string | undefined, jobs: number, atOnce: number) {
  const engine = await startEngine(script);
  try {
    const token = engine.tokens[0]!;
    const calls = serviceCalls(engine.url, token);
    await warmUp(engine.url, token, MODEL);
    let n = 0;
    let left = jobs;
    const cpu0 = processCpuS(engine.pid);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: atOnce }, async () => {
        while (left-- > 0) {
          const submitted = await calls.submit({ model_id: MODEL, text: `${SHORT} Job ${n++}.` });
          await (
            await openStream(`${engine.url}/v1/jobs/${submitted.jobId}/stream`, token)
          ).done;
        }
      }),
    );
    return { cpuMs: ((processCpuS(engine.pid) - cpu0) * 1000) / jobs, wallMs: (performance.now() - t0) / jobs };
  } finally {
    await engine.dispose();
  }
}

/**
 * Engine starts (a test run starts about 420; the extension one per window): the process's CPU once it listens, and
 * 2 s later, when it has read and compiled the speech synthesizer in the background, and its minor page faults then.
 */
async function engineStartsOn(script: string | undefined, starts: number) {
  const totals = { listenMs: 0, settledMs: 0, faults: 0 };
  for (let i = 0; i < starts; i++) {
    const engine = await startEngine(script);
    try {
      totals.listenMs += (processCpuS(engine.pid) * 1000) / starts;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      totals.settledMs += (processCpuS(engine.pid) * 1000) / starts;
      totals.faults += minorFaults(engine.pid) / starts;
    } finally {
      await engine.dispose();
    }
  }
  return totals;
}

async function startRows(starts: number, rounds: number, progress: (message: string) => void): Promise<Row[]> {
  const builds = buildsToCompare();
  const loadBefore = load();
  const totals = builds.map(() => ({ listenMs: 0, settledMs: 0, faults: 0 }));
  for (let round = 0; round < rounds; round++) {
    for (const [i, build] of builds.entries()) {
      progress(`short: engine starts, ${build.name}, round ${round + 1} of ${rounds}`);
      const result = await engineStartsOn(build.script, starts);
      for (const key of ['listenMs', 'settledMs', 'faults'] as const) totals[i]![key] += result[key] / rounds;
    }
  }
  const base = totals[1];
  return builds.map((build, i) => {
    const t = totals[i]!;
    return {
      bench: 'engine start (dist/cli.js serve, nothing submitted)',
      case: build.name,
      result: `${t.listenMs.toFixed(0)} ms CPU to listen, ${t.settledMs.toFixed(0)} ms 2 s later; ${Math.round(t.faults)} minor page faults`,
      note: `${i === 0 && base ? `${(t.settledMs / base.settledMs).toFixed(2)}x the base build's CPU, ${(t.faults / base.faults).toFixed(2)}x its page faults; ` : ''}${rounds} rounds of ${starts} starts${builds.length > 1 ? ', builds alternated' : ''}; load ${loadBefore} -> ${load()}`,
    };
  });
}

/** This checkout's build, and BENCH_BASE_DIST's (another checkout's dist folder, built) when it is set. */
function buildsToCompare(): { name: string; script: string | undefined }[] {
  const baseDist = process.env.BENCH_BASE_DIST;
  return [
    { name: 'this build', script: undefined },
    ...(baseDist ? [{ name: `base build (${baseDist})`, script: path.join(baseDist, 'cli.js') }] : []),
  ];
}

/**
 * This checkout's engine; with BENCH_BASE_DIST (another checkout's dist folder, built) that engine too, the two
 * alternated round by round in the same run, and the ratio.
 */
async function engineRows(jobs: number, rounds: number, progress: (message: string) => void): Promise<Row[]> {
  const builds = buildsToCompare();
  const rows: Row[] = [];
  for (const atOnce of [1, 4]) {
    const loadBefore = load();
    const totals = builds.map(() => ({ cpuMs: 0, wallMs: 0 }));
    for (let round = 0; round < rounds; round++) {
      for (const [i, build] of builds.entries()) {
        progress(`short: ${build.name}, ${atOnce} at a time, round ${round + 1} of ${rounds}`);
        const result = await shortJobsOn(build.script, jobs, atOnce);
        totals[i]!.cpuMs += result.cpuMs / rounds;
        totals[i]!.wallMs += result.wallMs / rounds;
      }
    }
    const mine = totals[0]!;
    const base = totals[1];
    for (const [i, build] of builds.entries()) {
      const t = totals[i]!;
      rows.push({
        bench: 'short job, engine process (two sentences, Mini)',
        case: `${build.name}, ${atOnce === 1 ? 'one after another' : `${atOnce} at a time`}`,
        result: `${t.cpuMs.toFixed(0)} ms CPU a job, ${t.wallMs.toFixed(0)} ms wall a job`,
        note: `${i === 0 && base ? `${(mine.cpuMs / base.cpuMs).toFixed(2)}x the base build's CPU, ${(mine.wallMs / base.wallMs).toFixed(2)}x its wall; ` : ''}${rounds} rounds of ${jobs} jobs${builds.length > 1 ? ', builds alternated' : ''}, each on a fresh engine after a warm-up job; load ${loadBefore} -> ${load()}`,
      });
    }
  }
  return rows;
}

/** CPU-bound processes beside the engine in the busy first-part rows (as bench/first-part.ts). */
const BUSY_LOOPS = 4;
const FIRST_PART_MODEL = 'article-audio-1-pro';

/** First parts of a warm engine's jobs, one after another: the median (p50) seconds to each job's first part. */
async function firstPartsOn(script: string | undefined, jobs: number, busyLoops: number): Promise<number> {
  const engine = await startEngine(script);
  const loops = busyLoops > 0 ? startBusyLoops(busyLoops) : undefined;
  try {
    const token = engine.tokens[0]!;
    const calls = serviceCalls(engine.url, token);
    await warmUp(engine.url, token, FIRST_PART_MODEL);
    const text = articleText('short');
    const firsts: number[] = [];
    for (let i = 0; i < jobs; i++) {
      const started = performance.now();
      const submitted = await calls.submit({ model_id: FIRST_PART_MODEL, text: `${text} Job ${i}.` });
      const stream = await openStream(`${engine.url}/v1/jobs/${submitted.jobId}/stream`, token);
      const first = await stream.next(firstPartOrEnd, 'the first part', 5 * 60_000);
      if (first.event !== 'result') throw new Error(`the job ended without a part: ${first.data.slice(0, 300)}`);
      firsts.push((first.at - started) / 1000);
      await stream.done;
    }
    return percentile(firsts, 50);
  } finally {
    await loops?.stop();
    await engine.dispose();
  }
}

async function firstPartRows(jobs: number, rounds: number, progress: (message: string) => void): Promise<Row[]> {
  const builds = buildsToCompare();
  const rows: Row[] = [];
  for (const busyLoops of [0, BUSY_LOOPS]) {
    const loadBefore = load();
    const medians = builds.map(() => [] as number[]);
    for (let round = 0; round < rounds; round++) {
      // Alternated, and the order turned every round.
      const order = round % 2 === 0 ? [...builds.keys()] : [...builds.keys()].reverse();
      for (const i of order) {
        progress(`short: first parts, ${builds[i]!.name}, ${busyLoops} loops, round ${round + 1} of ${rounds}`);
        medians[i]!.push(await firstPartsOn(builds[i]!.script, jobs, busyLoops));
      }
    }
    const mine = percentile(medians[0]!, 50);
    const base = medians[1] ? percentile(medians[1], 50) : undefined;
    for (const [i, build] of builds.entries()) {
      const m = percentile(medians[i]!, 50);
      rows.push({
        bench: `first part of a warm engine's job (Pro, short, one after another)`,
        case: `${build.name}, ${busyLoops === 0 ? 'nothing added' : `beside ${busyLoops} CPU-bound processes`}`,
        result: `${(m * 1000).toFixed(0)} ms (round medians ${medians[i]!.map((v) => (v * 1000).toFixed(0)).join(', ')})`,
        note: `${i === 0 && base ? `${(mine / base).toFixed(2)}x the base build's; ` : ''}${rounds} rounds of ${jobs} jobs${builds.length > 1 ? ', builds alternated' : ''}, each on a fresh engine after a warm-up job; load ${loadBefore} -> ${load()}`,
      });
    }
  }
  return rows;
}

export const shortJobs: Bench = {
  name: 'short',
  title:
    'Short jobs: the engine CPU per job and per start, the parse thread kept between tasks, first parts of a warm engine',
  async run(options) {
    options.progress('short: parse tasks, a thread per task and a kept thread');
    const rows = await parseRows(options.quick ? 2 : 4, options.quick ? 10 : 20);
    options.progress('short: short jobs on an engine process');
    rows.push(...(await engineRows(options.quick ? 20 : 30, options.quick ? 1 : 3, options.progress)));
    options.progress('short: engine starts');
    rows.push(...(await startRows(options.quick ? 3 : 5, options.quick ? 1 : 3, options.progress)));
    options.progress('short: first parts of a warm engine');
    rows.push(...(await firstPartRows(options.quick ? 4 : 6, options.quick ? 1 : 2, options.progress)));
    return rows;
  },
};
