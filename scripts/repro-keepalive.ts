// Reproduction for issue 29's ECONNRESET: poll GET /v1/jobs/<id> every 50 ms (as waitForJob does) while the engine's
// process gets no CPU for a while (SIGSTOP/SIGCONT: the extreme of a machine at load 40), and count failed polls.
//   node --import tsx scripts/repro-keepalive.ts [stall-ms] [stalls]
import { startEngineProcess } from '../test/support/engine-process';
import { articleText, serviceCalls } from '../test/support/http-calls';

async function main(): Promise<void> {
  const stallMs = Number(process.argv[2] ?? 6000);
  const stalls = Number(process.argv[3] ?? 3);
  const engine = await startEngineProcess({ args: ['--concurrency', '1'] });
  const calls = serviceCalls(engine.url, engine.tokens[0]!);
  let polls = 0;
  const failures: string[] = [];
  try {
    const id = (await calls.submit({ model_id: 'article-audio-1-mini', text: articleText(3000) })).jobId;
    let stop = false;
    const poller = (async () => {
      while (!stop) {
        try {
          await calls.get(`/v1/jobs/${id}`);
          polls++;
        } catch (error) {
          const e = error as Error & { cause?: { code?: string; message?: string } };
          failures.push(`${e.message}: ${e.cause?.code ?? ''} ${e.cause?.message ?? ''}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    for (let i = 0; i < stalls; i++) {
      await new Promise((r) => setTimeout(r, 700));
      process.kill(engine.pid, 'SIGSTOP');
      await new Promise((r) => setTimeout(r, stallMs));
      process.kill(engine.pid, 'SIGCONT');
    }
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await poller;
  } finally {
    await engine.dispose();
  }
  console.log(`stall ${stallMs} ms x${stalls}: ${polls} polls answered, ${failures.length} failed`);
  for (const f of failures) console.log('  ', f);
  process.exitCode = failures.length > 0 ? 1 : 0;
}

void main();
