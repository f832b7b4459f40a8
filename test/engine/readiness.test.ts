// /readyz of the embedded engine (`article-audio serve`), for a supervisor or load balancer: ready while it holds
// its data dir's lock and the data dir takes a write; not ready once another engine took the lock over (this engine
// refuses every submission then), while /healthz (liveness: the process answers) stays 200.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { articleText, call, serviceCalls } from '../support/http-calls';
import { type EngineProcess, startEngineProcess } from '../support/engine-process';
import { escapeRegExp } from '../support/regexp';

interface ReadyBody {
  data: { ready: boolean; checks: Record<string, { ok: boolean; error?: string }> };
}

describe('engine /readyz', () => {
  it('is ready while the engine owns its data dir, and not ready once another engine took its lock over', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'aa-ready-'));
    const engines: EngineProcess[] = [];
    try {
      const first = await startEngineProcess({ dataDir });
      engines.push(first);
      const ready = await call(`${first.url}/readyz`);
      assert.equal(ready.status, 200, ready.text);
      assert.deepEqual((ready.body as ReadyBody).data, {
        ready: true,
        checks: { stopping: { ok: true }, data_dir_lock: { ok: true }, data_dir_writable: { ok: true } },
      });
      assert.equal((await fetch(`${first.url}/readyz`, { method: 'HEAD' })).status, 200);

      // The first engine is frozen (a suspended machine, a stalled VM) longer than its lock's 8 s: a second engine
      // on the same data dir takes the lock over. Then the first one runs again.
      process.kill(first.pid, 'SIGSTOP');
      let second: EngineProcess;
      try {
        second = await startEngineProcess({ dataDir, args: ['--lock-wait-s', '40'], startTimeoutMs: 60_000 });
        engines.push(second);
      } finally {
        process.kill(first.pid, 'SIGCONT');
      }

      const deadline = Date.now() + 15_000;
      let answer = await call(`${first.url}/readyz`);
      while (answer.status === 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = await call(`${first.url}/readyz`);
      }
      assert.equal(answer.status, 503, answer.text);
      const body = answer.body as ReadyBody;
      assert.equal(body.data.ready, false);
      assert.deepEqual(body.data.checks.data_dir_lock, { ok: false, error: 'taken_over_by_another_engine' });
      assert.doesNotMatch(answer.text, new RegExp(escapeRegExp(dataDir)), 'no path');

      // Liveness is not readiness: the process still answers.
      assert.equal((await call(`${first.url}/healthz`)).status, 200);
      // And it refuses work, which is why it must not be sent any.
      const refused = await serviceCalls(first.url, first.tokens[0] as string).submit({
        model_id: 'article-audio-1-mini',
        text: articleText(),
      });
      assert.equal(refused.status, 503);
      // The engine that owns the data dir now is ready.
      assert.equal((await call(`${second.url}/readyz`)).status, 200);
    } finally {
      for (const engine of engines) await engine.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
