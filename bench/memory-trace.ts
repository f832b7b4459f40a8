// Where the engine's memory goes during one job, while it runs (the memory benchmark only reads the peak at the end).
// Starts the engine as the benchmark does (ENGINE_ENV, ENGINE_NODE_FLAGS), runs the warm-up job, then the article,
// and every 5 s prints the process's RSS (anonymous and file-backed), the peak so far, and each thread's own figures
// (heap used/total, external, array buffers; src/speech/threads/memory-trace.ts). It can stop early: memory
// usually shows its shape within a minute or two, where the whole 99k podcast takes several.
//
//   node --import tsx bench/memory-trace.ts [--seconds 90] [--model podcast] [--article long] [--env NAME=VALUE ...]
//
// Needs `npm run build`. --env adds to the engine's environment (e.g. --env MALLOC_MMAP_THRESHOLD_=65536).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENGINE_ENV, ENGINE_NODE_FLAGS } from '../src/engine/process-tuning';
import { startEngineProcess } from '../test/support/engine-process';
import { serviceCalls } from '../test/support/http-calls';
import { openStream } from '../test/support/sse-reader';
import { articleText } from './lib/articles';
import { warmUp } from './lib/engine-runs';
import { ARTICLES, type ArticleName, MODELS } from './lib/report';

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const seconds = Number(option('--seconds') ?? Infinity);
const article = (option('--article') ?? 'long') as ArticleName;
const modelName = option('--model') ?? 'podcast';
const model = MODELS.find((m) => m === modelName || m.endsWith(`-${modelName}`) || m.includes(modelName));
if (!model || !ARTICLES.includes(article)) throw new Error(`unknown model ${modelName} or article ${article}`);
const chosenModel: string = model;
const extraEnv: Record<string, string> = {};
process.argv.forEach((arg, i) => {
  if (arg !== '--env') return;
  const [name, ...value] = (process.argv[i + 1] ?? '').split('=');
  if (name) extraEnv[name] = value.join('=');
});

/** MB figures of /proc/PID/status. */
function processStatus(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of readFileSync(`/proc/${pid}/status`, 'utf8').matchAll(/^(VmRSS|VmHWM|RssAnon|RssFile):\s+(\d+)/gm))
    out[m[1]!] = Math.round(Number(m[2]) / 1024);
  return out;
}

interface ThreadLine {
  t: number;
  thread: string;
  threadId: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  arrayBuffersMb: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'memory-trace-'));
  const traceFile = path.join(dir, 'threads.ndjson');
  const engine = await startEngineProcess({
    startTimeoutMs: 60_000,
    env: { ...ENGINE_ENV, ...extraEnv, ARTICLE_AUDIO_MEMORY_TRACE: traceFile },
    nodeArgs: ENGINE_NODE_FLAGS,
  });
  const started = Date.now();
  let jobStarted = 0;
  let peak = 0;
  let lastPrint = 0;
  const threads = new Map<number, ThreadLine>();
  let read = 0;
  const sample = () => {
    const status = processStatus(engine.pid);
    peak = Math.max(peak, status.VmRSS ?? 0);
    const text = (() => {
      try {
        return readFileSync(traceFile, 'utf8');
      } catch {
        return '';
      }
    })();
    const complete = text.lastIndexOf('\n') + 1;
    for (const line of text.slice(read, complete).split('\n'))
      if (line) {
        const entry = JSON.parse(line) as ThreadLine;
        threads.set(entry.threadId, entry);
      }
    read = complete;
    const now = Date.now();
    if (now - lastPrint < 5000) return;
    lastPrint = now;
    // Threads that stopped reporting (a finished job's workers) are left out.
    const live = [...threads.values()].filter((e) => now - e.t < 2500);
    const perThread = live
      .map((e) => `${e.thread}: heap ${e.heapUsedMb}/${e.heapTotalMb} ext ${e.externalMb} ab ${e.arrayBuffersMb}`)
      .join(' | ');
    const clock = jobStarted
      ? `job +${Math.round((now - jobStarted) / 1000)} s`
      : `start +${Math.round((now - started) / 1000)} s`;
    console.log(
      `${clock}: rss ${status.VmRSS} (anon ${status.RssAnon}, file ${status.RssFile}) peak ${peak} MB || ${perThread}`,
    );
  };
  const sampler = setInterval(sample, 250);
  try {
    const token = engine.tokens[0] as string;
    const calls = serviceCalls(engine.url, token);
    await warmUp(engine.url, token, chosenModel);
    console.log(`after the warm-up job: ${JSON.stringify(processStatus(engine.pid))}`);
    jobStarted = Date.now();
    const answer = await calls.submit({ model_id: model, text: articleText(article) });
    const stream = await openStream(`${engine.url}/v1/jobs/${answer.jobId}/stream`, token);
    const end = stream.next(
      (e) => e.event === 'status' && /"status":"(succeeded|failed)"/.test(e.data),
      'the end',
      60 * 60_000,
    );
    const ended = await Promise.race([
      end.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), seconds * 1000)),
    ]);
    stream.close();
    sample();
    const { VmHWM } = processStatus(engine.pid);
    console.log(
      `${ended ? 'job ended' : 'stopped'} after ${Math.round((Date.now() - jobStarted) / 1000)} s: peak (VmHWM) ${VmHWM} MB; ${model}, ${article}; env ${JSON.stringify({ ...ENGINE_ENV, ...extraEnv })}`,
    );
  } finally {
    clearInterval(sampler);
    await engine.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

void main();
