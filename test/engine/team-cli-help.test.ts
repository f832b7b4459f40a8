// Black-box: each team role's --help (node dist/cli.js) lists exactly the flags that role reads, and the Postgres
// connection flags refuse bad values with a usage error naming the flag before any connection is tried (the
// address used here has no server behind it). No Postgres needed; npm run build first.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from '../support/cli-run';

/** The --flags a help text lists as options (at the start of an option line). */
function listedFlags(help: string): Set<string> {
  return new Set([...help.matchAll(/^ {2}(--[a-z0-9-]+)/gm)].map((m) => m[1] as string));
}

async function helpOf(args: string[], env: Record<string, string> = {}): Promise<Set<string>> {
  const run = await runCli(args, { env: env, killAfterMs: 90_000 });
  assert.equal(run.code, 0, `${args.join(' ')}: exit ${run.code}\n${run.stderr}`);
  assert.equal(run.stderr, '', `${args.join(' ')} writes nothing to stderr`);
  return listedFlags(run.stdout);
}

function assertFlags(listed: Set<string>, expected: readonly string[], what: string): void {
  assert.deepEqual([...listed].sort(), [...expected].sort(), `${what} lists exactly these flags`);
}

const DB = ['--database', '--db-statement-timeout-s', '--db-ssl-mode', '--db-ca-file'];
const NODE_DB = [...DB, '--db-pool-size', '--storage', '--s3-endpoint', '--log-format'];
const API_NODE = [
  ...NODE_DB,
  '--host',
  '--port',
  '--tokens-file',
  '--queue-depth',
  '--retention-s',
  '--heartbeat-s',
  '--max-body-bytes',
  '--idempotency-window-s',
  '--public-url',
  '--max-connections',
  '--idle-socket-timeout-s',
  '--token-submit-rate',
  '--token-max-jobs',
  '--min-free-disk-mb',
  '--log-level',
];
const WORKER = [
  ...NODE_DB,
  '--lease-s',
  '--stop-grace-s',
  '--work-dir',
  '--metrics-port',
  '--host',
  '--voices',
  '--concurrency',
  '--fetch-max-bytes',
  '--fetch-timeout-s',
  '--fetch-max-redirects',
  '--progress-interval-s',
  '--max-crashes',
  '--allow-private-network',
  '--fetch-allow-hosts',
  '--log-level',
];

describe('team CLI: help per role', () => {
  it('serve --help in team mode lists an API node flags only (flag or environment), none of the local engine', async () => {
    for (const [args, env] of [
      [['serve', '--database', 'postgres://db.invalid/aa', '--help'], {}],
      [['serve', '--help'], { ARTICLE_AUDIO_DATABASE_URL: 'postgres://db.invalid/aa' }],
      [['help', 'serve', '--database', 'postgres://db.invalid/aa'], {}],
    ] as const) {
      const listed = await helpOf([...args], env);
      assertFlags(listed, API_NODE, `${args.join(' ')}`);
      for (const local of ['--data-dir', '--lock-wait-s', '--concurrency', '--allow-private-network', '--lease-s'])
        assert.ok(!listed.has(local), `${args.join(' ')} does not list ${local}`);
    }
  });

  it('serve --help without a database is the local engine help, with --data-dir and without team flags', async () => {
    const listed = await helpOf(['serve', '--help']);
    for (const flag of ['--data-dir', '--lock-wait-s', '--concurrency', '--allow-private-network'])
      assert.ok(listed.has(flag), `lists ${flag}`);
    for (const flag of ['--database', '--db-pool-size', '--storage', '--lease-s'])
      assert.ok(!listed.has(flag), `does not list ${flag}`);
  });

  it('worker --help lists its own flags, --allow-private-network among them', async () => {
    const listed = await helpOf(['worker', '--help']);
    assertFlags(listed, WORKER, 'worker --help');
    assertFlags(await helpOf(['help', 'worker']), WORKER, 'help worker');
  });

  it('token, workers and settings print their help (with the database flags) instead of an error', async () => {
    for (const command of ['token', 'workers', 'settings']) {
      for (const args of [
        [command, '--help'],
        [command, '-h'],
        ['help', command],
        [command, 'add', 'x', '--help'],
      ]) {
        if (args[1] === 'add' && command !== 'token') continue;
        const run = await runCli(args, { killAfterMs: 90_000 });
        assert.equal(run.code, 0, `${args.join(' ')}: exit ${run.code}\n${run.stderr}`);
        assert.match(run.stdout, new RegExp(`^Usage: article-audio ${command} `), `${args.join(' ')} prints help`);
        const listed = listedFlags(run.stdout);
        for (const flag of DB) assert.ok(listed.has(flag), `${args.join(' ')} lists ${flag}`);
        for (const flag of ['--db-pool-size', '--storage', '--data-dir'])
          assert.ok(!listed.has(flag), `${args.join(' ')} does not list ${flag}`);
      }
    }
  });
});

describe('team CLI: Postgres connection flags refuse bad values at start', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-team-cli-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const notPem = path.join(dir, 'not-a-cert.pem');
  writeFileSync(notPem, 'hello\n');
  // Port 9 on loopback: nothing listens; a start that got past the flags would fail to connect instead.
  const database = 'postgres://aa@127.0.0.1:9/aa';
  const storage = path.join(dir, 'files');

  const cases: { args: string[]; env?: Record<string, string>; says: RegExp }[] = [
    { args: ['--db-pool-size', '0'], says: /--db-pool-size must be a whole number from 2 to 1000, not "0"/ },
    { args: ['--db-pool-size=many'], says: /--db-pool-size must be a whole number from 2 to 1000, not "many"/ },
    { args: [], env: { ARTICLE_AUDIO_DB_POOL_SIZE: '5000' }, says: /--db-pool-size must be .* not "5000"/ },
    { args: ['--db-statement-timeout-s', '-1'], says: /--db-statement-timeout-s must be a number of seconds/ },
    { args: ['--db-ssl-mode', 'prefer'], says: /--db-ssl-mode must be disable, require or verify-full, not "prefer"/ },
    {
      args: ['--db-ca-file', path.join(dir, 'missing-ca.pem')],
      says: /--db-ca-file .*missing-ca\.pem cannot be read \(ENOENT\)/,
    },
    { args: ['--db-ca-file', notPem], says: /--db-ca-file .*not-a-cert\.pem holds no PEM certificate/ },
    { args: ['--db-ca-file', notPem, '--db-ssl-mode', 'disable'], says: /--db-ca-file needs TLS/ },
  ];

  for (const role of ['serve', 'worker', 'token']) {
    it(`${role}: each bad value is a usage error (exit 2) naming its flag`, async () => {
      for (const c of cases) {
        const base =
          role === 'token'
            ? ['token', 'list', '--database', database]
            : [role, '--database', database, '--storage', storage];
        const run = await runCli([...base, ...c.args], { env: c.env ?? {}, killAfterMs: 90_000 });
        assert.equal(run.code, 2, `${role} ${c.args.join(' ')}: exit ${run.code}\n${run.stderr}`);
        assert.match(run.stderr, c.says, `${role} ${c.args.join(' ')}`);
        assert.match(run.stderr, /Run `article-audio --help` for usage/);
      }
    });
  }

  it("serve in team mode refuses a local engine's or a worker's flag, naming it, before connecting", async () => {
    const local = ['--data-dir', path.join(dir, 'data'), '--lock-wait-s', '5'];
    for (const [args, env, says] of [
      [
        ['--data-dir', path.join(dir, 'data')],
        {},
        /--data-dir is a flag of the local engine and means nothing in team mode/,
      ],
      [['--lock-wait-s=5'], {}, /--lock-wait-s is a flag of the local engine and means nothing in team mode/],
      [local, {}, /--data-dir is a flag of the local engine/],
      [
        ['--concurrency', '4'],
        {},
        /--concurrency is a worker's flag \(article-audio worker\) and means nothing to a team API node/,
      ],
      [['--lease-s', '10'], {}, /--lease-s is a worker's flag/],
      [['--allow-private-network'], {}, /--allow-private-network is a worker's flag/],
    ] as const) {
      const base = ['serve', '--database', database, '--storage', storage];
      const run = await runCli([...base, ...args], { env: { ...env }, killAfterMs: 90_000 });
      assert.equal(run.code, 2, `serve ${args.join(' ')}: exit ${run.code}\n${run.stderr}`);
      assert.match(run.stderr, says, `serve ${args.join(' ')}`);
      assert.match(run.stderr, /serve --database URL --help/);
      assert.doesNotMatch(run.stderr, /ECONNREFUSED|connect/i, 'refused before any connection is tried');
    }
    // The same with the database address from the environment.
    const viaEnv = await runCli(['serve', '--storage', storage, '--concurrency', '2'], {
      env: { ARTICLE_AUDIO_DATABASE_URL: database },
      killAfterMs: 90_000,
    });
    assert.equal(viaEnv.code, 2, viaEnv.stderr);
    assert.match(viaEnv.stderr, /--concurrency is a worker's flag/);
    // The local engine itself still takes them.
    const help = await runCli(['serve', '--data-dir', path.join(dir, 'data'), '--help'], { killAfterMs: 90_000 });
    assert.equal(help.code, 0, help.stderr);
  });

  it('TLS both in the address and in flags is refused (node-postgres would let the address win)', async () => {
    const run = await runCli(
      ['serve', '--database', `${database}?sslmode=verify-full`, '--storage', storage, '--db-ssl-mode', 'require'],
      { killAfterMs: 90_000 },
    );
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /TLS is set twice: the --database address has sslmode/);
  });
});
