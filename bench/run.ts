// `npm run bench`: runs the benchmarks one after another (never two at once: they share the machine) and prints one
// table at the end. A full run also writes BENCHMARKS.md.
//
//   npm run bench                              everything (several minutes), writes BENCHMARKS.md
//   npm run bench -- --quick                   short and medium articles only, fewer samples
//   npm run bench -- speed memory              only these benchmarks (speed, parts, short, memory, service, extension, player, client, hostile, provider, team, capacity)
//   npm run bench -- speed --models mini,pro --articles short,medium
//   npm run bench -- --write                   write BENCHMARKS.md after a partial run too
//   npm run bench -- extraction --pages DIR    article extraction on a development set (bench/devset.ts builds it);
//                                              --min-kb 100 --max-kb 200 for the pages of that size only
import { existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { capacity } from './capacity';
import { client } from './client';
import { engineMemory } from './engine-memory';
import { engineSpeed } from './engine-speed';
import { extraction } from './extraction';
import { extension } from './extension';
import { firstPart } from './first-part';
import { player } from './player';
import { listening } from './listening';
import { provider } from './provider';
import { hostile } from './hostile';
import { repoRoot } from './lib/articles';
import { describeMachine, machineText } from './lib/machine';
import { ARTICLES, type Bench, type BenchOptions, MODELS, type Row, formatTable } from './lib/report';
import { service } from './service';
import { team } from './team';
import { serviceDown } from './service-down';
import { shortJobs } from './short-jobs';

const BENCHES: Bench[] = [
  engineSpeed,
  firstPart,
  shortJobs,
  engineMemory,
  service,
  serviceDown,
  extension,
  player,
  client,
  hostile,
  extraction,
  listening,
  provider,
  team,
  capacity,
];

function listOption(args: string[], name: string): string[] | undefined {
  const index = args.indexOf(name);
  if (index < 0) return undefined;
  return (args[index + 1] ?? '').split(',').filter(Boolean);
}

function numberOption(args: string[], name: string): number | undefined {
  const value = listOption(args, name)?.[0];
  if (value === undefined) return undefined;
  const number = Number(value);
  return Number.isFinite(number) && number >= 0 ? number : fail(`${name} needs a number, not "${value}"`);
}

function fail(message: string): never {
  console.error(`bench: ${message}`);
  process.exit(2);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const valueFlags = new Set(['--models', '--articles', '--pages', '--sources', '--details', '--min-kb', '--max-kb']);
  const names = args.filter((a, i) => !a.startsWith('--') && !valueFlags.has(args[i - 1] ?? ''));
  for (const name of names)
    if (!BENCHES.some((b) => b.name === name))
      fail(`no benchmark named ${name}; choose from ${BENCHES.map((b) => b.name).join(', ')}`);
  const models = (listOption(args, '--models') ?? [...MODELS]).map(
    (m) =>
      MODELS.find((full) => full === m || full.endsWith(`-${m}`) || (m === 'podcast' && full.includes('podcast'))) ??
      fail(`unknown model ${m}`),
  );
  const articles = (listOption(args, '--articles') ?? (quick ? ['short', 'medium'] : [...ARTICLES])).map(
    (a) => ARTICLES.find((name) => name === a) ?? fail(`unknown article ${a}`),
  );
  const selected = names.length > 0 ? BENCHES.filter((b) => names.includes(b.name)) : BENCHES;
  const complete = names.length === 0 && !quick && !args.includes('--models') && !args.includes('--articles');

  // The extraction benchmark calls the engine's source directly; the others start the built engine.
  if (selected.some((b) => b.name !== 'extraction') && !existsSync(path.join(repoRoot, 'dist', 'cli.js')))
    fail('dist/ is missing: run `npm run build` first.');
  const started = Date.now();
  const loadBefore = os.loadavg()[0] ?? 0;
  const options: BenchOptions = {
    quick,
    models,
    articles,
    pages: listOption(args, '--pages')?.[0],
    sources: listOption(args, '--sources'),
    details: listOption(args, '--details')?.[0],
    minKb: numberOption(args, '--min-kb'),
    maxKb: numberOption(args, '--max-kb'),
    progress: (message) => console.error(`[${Math.round((Date.now() - started) / 1000)} s] ${message}`),
  };
  const rows: Row[] = [];
  for (const bench of selected) {
    options.progress(`${bench.title}`);
    try {
      rows.push(...(await bench.run(options)));
    } catch (error) {
      rows.push({
        bench: bench.title,
        case: 'error',
        result: 'did not finish',
        note: error instanceof Error ? error.message.split('\n')[0] : String(error),
      });
      console.error(error);
    }
  }

  const machine = describeMachine();
  const command = `npm run bench${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`;
  const table = formatTable(rows);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  // Other work on a shared machine skews every number; the load average says how much there was.
  const load = `load average ${loadBefore.toFixed(1)} at the start, ${(os.loadavg()[0] ?? 0).toFixed(1)} at the end`;
  console.log(`\n${table}\n\nMachine: ${machineText(machine)}; ${load}\nCommand: ${command} (${minutes} min)`);
  if (complete || args.includes('--write')) {
    writeFileSync(
      path.join(repoRoot, 'BENCHMARKS.md'),
      benchmarksMarkdown(table, `${machineText(machine)}; ${load}`, command, minutes),
    );
    console.log('Wrote BENCHMARKS.md');
  }
  // Engine processes and worker threads are gone by now; anything left (a keep-alive socket) must not hold the run.
  process.exit(0);
}

function benchmarksMarkdown(table: string, machine: string, command: string, minutes: string): string {
  return `# Benchmarks

The latest table from \`${command}\` (${minutes} min), run on ${new Date().toISOString().slice(0, 10)}.
Benchmarks report; they never fail. Targets come from issue 9; "MISSES" marks a result outside its target.

**Machine:** ${machine}. The machine is shared with other work, so single numbers are noisy; ratios measured
side by side in the same run (end to end against synthesis alone) are the ones to compare.

${table}

## What is measured

- **Engine speed, end to end**: one job on a fresh \`node dist/cli.js serve\` process (after a tiny warm-up job
  that starts the synthesis workers), from sending the submission to the stream's \`succeeded\` status; seconds of
  MP3 audio per second of that time. Articles: \`test/fixtures/articles/{short,medium,long}.md\`.
- **Synthesis alone**: the same script lines (the engine's own script builder) through the engine's synthesis pool
  (Flite WebAssembly in as many worker threads as the engine uses), all queued at once, in this process; speech
  seconds produced per second.
- **Pipeline overhead**: end-to-end time / synthesis-alone time - 1.
- **Engine peak memory**: \`VmHWM\` of the engine process from \`/proc/<pid>/status\` after the job (worker threads
  included), a fresh process per job.
- **Service**: submission to the first \`status\` event; 500 streams following one job while it is synthesized, the
  delay from each \`log\` event's \`created_at\` to its arrival at each follower (the followers run in the benchmark
  process, on the same cores); \`GET /v1/jobs/{id}\` per second over 32 keep-alive connections.
- **Extension**: \`npm run package\` in a copy of the repo; sizes of the minified bundles and the \`.vsix\`.
  Activation time needs a running VS Code and is not measured by this command.
- **Capacity**: 2 API nodes and 1, 4, 16, 64 worker processes (concurrency 2, the test pipeline's 2 x 10 ms) on one
  Postgres: a paused fleet gets 400 jobs and 1,000 SSE followers, then drains them; jobs/s, event rows written and
  delivered, follower and submission p99, \`pg_stat_activity\` connections, CPU per job by role; and the event rows
  of one real Mini and Pro job.
- **Client**: \`JobServiceClient.followJob\` against the engine in-process with a test pipeline that holds each job
  for exactly its length; requests counted from the engine's request log; lateness = when the client saw the
  terminal status minus the job's \`finished_at\`.

Run a part: \`npm run bench -- --quick\`, \`npm run bench -- speed memory\`, \`npm run bench -- speed --models mini --articles short\`.
`;
}

void main();
