// TLS to Postgres, on a real server with ssl=on and a certificate signed by a test CA (openssl): an API node and a
// worker given --db-ca-file connect over TLS (every connection, pool and LISTEN, is in pg_stat_ssl with ssl true) and
// run a job; a CA that did not sign the server's certificate is refused at start; --db-ssl-mode require encrypts
// without checking; and what node-postgres does with `?sslmode=` in the address (measured here, said in the README).
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot } from '../support/engine-process';
import { articleText, serviceCalls, waitForJob } from '../support/http-calls';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const mini = 'article-audio-1-mini';

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('ARTICLE_AUDIO_')));
  const child = spawn(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), ...args], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('team Postgres over TLS', () => {
  let postgres: TestPostgres;
  let cluster: Cluster;
  let caFile: string;
  let otherDir: string;
  let otherCa: string;

  before(async () => {
    postgres = await startPostgres({ tls: true });
    caFile = postgres.caFile as string;
    otherDir = mkdtempSync(path.join(os.tmpdir(), 'aa-other-ca-'));
    otherCa = path.join(otherDir, 'other-ca.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        path.join(otherDir, 'k'),
        '-out',
        otherCa,
        '-days',
        '2',
        '-subj',
        '/CN=another-ca',
      ],
      { stdio: 'pipe' },
    );
    cluster = await startCluster({
      serverUrl: postgres.url,
      apiArgs: ['--db-ca-file', caFile],
      workerArgs: ['--db-ca-file', caFile, '--concurrency', '1'],
      workerEnv: { AA_TEST_STEPS: '2', AA_TEST_STEP_MS: '10' },
    });
  });
  after(async () => {
    await cluster?.dispose();
    await postgres?.stop();
    if (otherDir) rmSync(otherDir, { recursive: true, force: true });
  });

  it('an API node and a worker with --db-ca-file connect over TLS only, and a job runs', async () => {
    await cluster.startApi();
    await cluster.startWorker();
    const calls = serviceCalls(cluster.apis[0]?.url ?? '', cluster.tokens[0] as string);
    const submitted = await calls.submit({ model_id: mini, text: articleText() });
    assert.equal(submitted.status, 202, submitted.text);
    await waitForJob(calls, submitted.jobId, (job) => job.status === 'succeeded', 60_000);
    const rows = await cluster.query<{ application_name: string; ssl: boolean }>(
      `SELECT a.application_name, s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
       WHERE a.datname = current_database() AND a.application_name LIKE 'article-audio%'`,
    );
    const names = new Set(rows.map((r) => r.application_name));
    assert.ok(names.has('article-audio') && names.has('article-audio-listen'), JSON.stringify(rows));
    assert.ok(
      rows.every((r) => r.ssl),
      `every node connection is TLS: ${JSON.stringify(rows)}`,
    );
  });

  it('a CA that did not sign the server certificate is refused at start; require encrypts without checking', async () => {
    const wrong = await runCli(['token', 'list', '--database', cluster.databaseUrl, '--db-ca-file', otherCa]);
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(wrong.stderr, /certificate/i);
    const require = await runCli(['token', 'list', '--database', cluster.databaseUrl, '--db-ssl-mode', 'require']);
    assert.equal(require.code, 0, require.stderr);
    const verified = await runCli([
      'token',
      'list',
      '--database',
      cluster.databaseUrl,
      '--db-ssl-mode',
      'verify-full',
      '--db-ca-file',
      caFile,
    ]);
    assert.equal(verified.code, 0, verified.stderr);
  });

  it('node-postgres and ?sslmode= in the address: require is verify-full there (no CA: refused), sslrootcert works', async () => {
    const plain = await runCli(['token', 'list', '--database', `${cluster.databaseUrl}?sslmode=require`]);
    assert.equal(plain.code, 1, `sslmode=require in the URL checks the certificate: ${plain.stderr}`);
    assert.match(plain.stderr, /certificate/i);
    const rooted = await runCli([
      'token',
      'list',
      '--database',
      `${cluster.databaseUrl}?sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}`,
    ]);
    assert.equal(rooted.code, 0, rooted.stderr);
  });
});
