// A real Postgres for the team tests: Debian's server binaries, a cluster made with initdb in a temp folder, run as
// an unprivileged user (the `postgres` or `nobody` account when the tests run as root, which initdb refuses) on a
// free loopback port. Installed once with apt-get when missing (scripts/test-env.mjs, as root only).
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ownProcess } from '../support/own-processes.mjs';

export interface TestPostgres {
  url: string;
  /** The server process id (for tests that kill it); a restart changes it. */
  readonly pid: number;
  /**
   * `pg_ctl restart -m immediate`: the postmaster gets SIGQUIT (every connection dropped, no checkpoint, crash
   * recovery at the next start), then starts again on the same port and data; resolves once it accepts queries.
   */
  restartImmediate(): Promise<void>;
  /** A clean stop (fast shutdown: connections end, new ones are refused) that keeps the data, until up(). */
  down(): Promise<void>;
  /** Starts the server again on the same port and data; resolves once it accepts queries. */
  up(): Promise<void>;
  stop(): Promise<void>;
  /** With `tls`: the PEM file of the test CA that signed the server's certificate (for 127.0.0.1 and localhost). */
  caFile?: string;
}

function binDir(): string | undefined {
  const fromConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (fromConfig.status === 0 && existsSync(path.join(fromConfig.stdout.trim(), 'initdb')))
    return fromConfig.stdout.trim();
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin');
}

async function postgresBin(): Promise<string> {
  let dir = binDir();
  if (!dir) {
    const { ensurePostgres } = await import('../../scripts/test-env.mjs');
    ensurePostgres();
    dir = binDir();
  }
  if (!dir) throw new Error('Postgres server binaries not found after installing: apt-get install postgresql');
  return dir;
}

/** The account the server runs as: never root (initdb and postgres refuse it). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    const result = spawnSync('id', ['-u', name], { encoding: 'utf8' });
    if (result.status === 0) {
      const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
      return { uid: Number(result.stdout.trim()), gid: Number(gid.stdout.trim()) };
    }
  }
  throw new Error('Running as root, and neither a postgres nor a nobody account exists to run the test database as.');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `crashSafe`: commits are on disk when they return (synchronous_commit on), as in production. The default trades
 * that for speed; a test that crashes the server (`restartImmediate`) and counts what survived needs it, since a
 * commit acknowledged before its WAL left shared memory is lost in the crash.
 */
/**
 * A test CA and a server certificate it signed for 127.0.0.1 and localhost (openssl), in `dir`; the server's key is
 * the server account's, mode 0600 (Postgres refuses a key others can read).
 */
function makeCertificates(
  dir: string,
  user: { uid: number; gid: number } | undefined,
): { cert: string; key: string; ca: string } {
  const file = (name: string) => path.join(dir, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe', cwd: dir });
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=article-audio-test-ca',
  ]);
  openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
    '-subj',
    '/CN=localhost',
  ]);
  writeFileSync(file('server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl([
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('server.crt'),
    '-days',
    '2',
    '-extfile',
    file('server.ext'),
  ]);
  chmodSync(file('server.key'), 0o600);
  if (user) {
    chownSync(file('server.key'), user.uid, user.gid);
    chownSync(file('server.crt'), user.uid, user.gid);
  }
  return { cert: file('server.crt'), key: file('server.key'), ca: file('ca.pem') };
}

export async function startPostgres(
  options: { crashSafe?: boolean; tls?: boolean; maxConnections?: number } = {},
): Promise<TestPostgres> {
  const bin = await postgresBin();
  const user = serverUser();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = path.join(dir, 'data');
  const as = user ? { uid: user.uid, gid: user.gid } : {};
  execFileSync(
    path.join(bin, 'initdb'),
    ['-D', data, '-U', 'aa', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
    { ...as, stdio: 'pipe', cwd: dir },
  );
  const port = await freePort();
  const url = `postgres://aa@127.0.0.1:${port}/postgres`;
  const tls = options.tls ? makeCertificates(dir, user) : undefined;
  let stderr = '';
  const launch = async () => {
    const child: ChildProcess = spawn(
      path.join(bin, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        `synchronous_commit=${options.crashSafe ? 'on' : 'off'}`,
        '-c',
        'full_page_writes=off',
        '-c',
        `max_connections=${options.maxConnections ?? 300}`,
        ...(tls ? ['-c', 'ssl=on', '-c', `ssl_cert_file=${tls.cert}`, '-c', `ssl_key_file=${tls.key}`] : []),
      ],
      { ...as, stdio: ['ignore', 'ignore', 'pipe'], cwd: dir },
    );
    ownProcess(child);
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Ready when it accepts a query (it starts in well under a second; a loaded machine may take longer).
    for (let attempt = 0; ; attempt++) {
      if (child.exitCode !== null) throw new Error(`Postgres exited during start-up: ${stderr}`);
      const client = new pg.Client({ connectionString: url });
      try {
        await client.connect();
        await client.query('SELECT 1');
        await client.end();
        break;
      } catch {
        await client.end().catch(() => undefined);
        if (attempt > 600) throw new Error(`Postgres did not accept connections: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    return { child, exited };
  };
  let server = await launch();
  process.on('exit', () => server.child.kill('SIGKILL'));
  return {
    url,
    ...(tls ? { caFile: tls.ca } : {}),
    get pid() {
      return server.child.pid ?? -1;
    },
    async restartImmediate() {
      server.child.kill('SIGQUIT');
      await server.exited;
      server = await launch();
    },
    async down() {
      server.child.kill('SIGINT');
      await server.exited;
    },
    async up() {
      server = await launch();
    },
    async stop() {
      server.child.kill('SIGINT');
      await server.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh database on the server, so tests sharing one server do not see each other's jobs. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
