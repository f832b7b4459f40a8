// A remote service: the key from SecretStorage (asked for when missing, never written to settings or the log),
// a rejected key, and VS Code's proxy setting. The "remote" service is a second engine process on loopback with its
// own token, reached through a CONNECT proxy that is the only way to resolve its host name.
import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { Commands } from '../../../src/command-ids';
import type { ArticleAudioApi } from '../../../src/extension';
import type { JobRecord } from '../../../src/jobs/types';
import { article, EXTENSION_ID, extensionApi, setSetting, waitForEnd } from './helpers';
import { startConnectProxy, type ConnectProxy } from '../../support/connect-proxy';

const KEY = `remote-key-${Math.random().toString(36).slice(2)}-integration`;
const HOST = 'audio-service.test';

async function startRemoteEngine(dataDir: string): Promise<{ port: number; child: ChildProcess }> {
  const extension = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(extension);
  // Clients reach it as HOST through the proxy, so it must name that address in its output links (--public-url): it
  // never takes it from the Host header. The port is chosen first so that the address is known before it starts.
  const free = net.createServer();
  await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
  const chosen = (free.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => free.close(() => resolve()));
  const child = spawn(
    process.execPath,
    [
      path.join(extension.extensionPath, 'dist', 'engine.js'),
      '--port',
      String(chosen),
      '--public-url',
      `http://${HOST}:${chosen}`,
      '--data-dir',
      dataDir,
      '--exit-with-stdin',
    ],
    {
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', ARTICLE_AUDIO_TOKENS: KEY },
      stdio: ['pipe', 'pipe', 'ignore'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as { event: string; url?: string; message?: string };
      if (message.event === 'listening' && message.url) resolve(message.url);
      else reject(new Error(message.message));
    });
    child.once('exit', (code) => reject(new Error(`engine exited ${code}`)));
  });
  return { port: Number(new URL(url).port), child };
}

function filesUnder(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

describe('A remote service', function () {
  this.timeout(180_000);
  let api: ArticleAudioApi;
  let proxy: ConnectProxy;
  let remote: { port: number; child: ChildProcess };
  let dataDir: string;

  before(async () => {
    api = await extensionApi();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-remote-'));
    remote = await startRemoteEngine(dataDir);
    proxy = await startConnectProxy(HOST);
    await vscode.commands.executeCommand(Commands.clearApiKey);
    await setSetting('articleAudio', 'model', 'article-audio-1-mini');
    await setSetting('articleAudio', 'openPlayerWhenDone', false);
    await setSetting('http', 'proxy', proxy.url);
    await setSetting('articleAudio', 'service.baseUrl', `http://${HOST}:${remote.port}`);
  });

  after(async () => {
    await vscode.commands.executeCommand(Commands.clearApiKey);
    await setSetting('articleAudio', 'service.baseUrl', undefined);
    await setSetting('http', 'proxy', undefined);
    proxy?.close();
    // Its folder goes once it has exited: an engine still shutting down writes there (a run removed under it comes
    // back as an empty folder).
    const child = remote?.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function convert(title: string): Promise<JobRecord | undefined> {
    const document = await vscode.workspace.openTextDocument({ language: 'markdown', content: article(title, 2) });
    await vscode.window.showTextDocument(document);
    return vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertDocument);
  }

  it('without a key: says so, offers to set it, and submits nothing', async () => {
    const shown = api.notifier.shown.length;
    const job = await convert('No Key Yet');
    assert.equal(job, undefined);
    const [error] = api.notifier.shown.slice(shown);
    assert.ok(error, 'no notification was shown');
    assert.match(error.message, new RegExp(`needs an API key for ${HOST.replace(/\./g, '\\.')}`));
    assert.ok(error.actions.includes('Set API Key'), `actions: ${error.actions.join(', ')}`);
    assert.equal(proxy.tunnels.length, 0, 'a request was sent without a key');
  });

  it('a wrong key: Set API Key checks it with the service and refuses it; a wrong key kept anyway gets Set API Key first on the 401', async () => {
    const service = `http://${HOST}:${remote.port}`;
    let shown = api.notifier.shown.length;
    assert.equal(await vscode.commands.executeCommand(Commands.setApiKey, 'wrong-key-1234567890'), false);
    const refusal = api.notifier.shown.slice(shown).at(-1);
    assert.ok(refusal, 'Set API Key said nothing');
    assert.match(
      refusal.message,
      new RegExp(`${HOST.replace(/\./g, '\\.')}:${remote.port} refused this key; it was not saved`),
    );
    assert.equal(await api.keys.get(service), undefined, 'the refused key was saved');

    // A key that the service stops taking later (revoked): kept in SecretStorage, refused at the next request.
    await api.keys.set(service, 'wrong-key-1234567890');
    shown = api.notifier.shown.length;
    const job = await convert('Wrong Key');
    assert.equal(job, undefined);
    const [error] = api.notifier.shown.slice(shown);
    assert.ok(error);
    assert.equal(error.actions[0], 'Set API Key', `actions: ${error.actions.join(', ')}`);
    assert.notEqual(error.actions[0], 'Retry');
    // The service's own words stay readable (the redactor once took "send" for a credential), the advice comes once.
    assert.match(error.message, /Missing or wrong API token: send `Authorization: Bearer <token>`/);
    assert.doesNotMatch(error.message, /\[redacted\]/);
    assert.equal(
      (error.message.match(/Set (the right|the|an) (API )?key|Check (that )?the key/gi) ?? []).length,
      1,
      `advice given more than once: ${error.message}`,
    );
    assert.doesNotMatch(error.message, /wrong-key-1234567890/);
    await api.keys.clear(service);
  });

  it('with the key: the job runs through the proxy, and the key is only in SecretStorage', async () => {
    const shown = api.notifier.shown.length;
    assert.equal(await vscode.commands.executeCommand(Commands.setApiKey, KEY), true);
    assert.match(
      api.notifier.shown
        .slice(shown)
        .map((n) => n.message)
        .join('\n'),
      /Key accepted by /,
    );
    const job = await convert('Through the Proxy');
    assert.ok(job, `no job: ${JSON.stringify(api.notifier.shown.at(-1))}`);
    assert.equal(job.service, `http://${HOST}:${remote.port}`);
    const done = await waitForEnd(api, job.id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    assert.ok(done.files && statSync(done.files.audio).size > 4000);
    assert.ok(
      proxy.tunnels.some((t) => t === `${HOST}:${remote.port}`),
      `no tunnel through the proxy: ${proxy.tunnels.join(', ')}`,
    );

    // Not in any setting…
    for (const section of ['articleAudio', 'http']) {
      assert.doesNotMatch(JSON.stringify(vscode.workspace.getConfiguration(section)), new RegExp(KEY));
    }
    // …not in the log (which did record this job), not in the job list…
    const logFiles = filesUnder(path.dirname(api.logUri.fsPath)).filter((f) => f.endsWith('.log'));
    const logs = logFiles.map((f) => readFileSync(f, 'utf8')).join('\n');
    assert.ok(
      logs.includes(job.id),
      `the log files (${logFiles.length}) do not mention the job, so this check would prove nothing`,
    );
    assert.ok(!logs.includes(KEY), 'the API key appears in a log file');
    assert.ok(!JSON.stringify(api.jobs.all()).includes(KEY));
    // …and not in any file the extension keeps in its storage (job list, engine data, audio cache).
    const stored = filesUnder(api.storageUri.fsPath).filter((f) => statSync(f).size < 5_000_000);
    assert.ok(stored.length > 0, 'the extension keeps no files, so this check would prove nothing');
    for (const file of stored) assert.ok(!readFileSync(file).includes(KEY), `the API key appears in ${file}`);
    assert.equal(await api.keys.get(`http://${HOST}:${remote.port}`), KEY, 'SecretStorage does not hold the key');
  });

  it('never sends the key to another address: a changed base URL (say, from a workspace) needs its own key', async () => {
    const own = `http://${HOST}:${remote.port}`;
    assert.equal(await api.keys.get(own), KEY, 'the previous test left no key, so this check would prove nothing');
    // Same host, another port: another origin. Requests would be tunnelled through the proxy, which records them.
    const other = `http://${HOST}:${remote.port + 1}`;
    await setSetting('articleAudio', 'service.baseUrl', other);
    try {
      const tunnels = proxy.tunnels.length;
      const shown = api.notifier.shown.length;
      const job = await convert('Somewhere Else');
      assert.equal(job, undefined);
      const [error] = api.notifier.shown.slice(shown);
      assert.ok(error, 'no notification was shown');
      assert.match(error.message, new RegExp(`needs an API key for ${HOST.replace(/\./g, '\\.')}:${remote.port + 1}`));
      assert.deepEqual(proxy.tunnels.slice(tunnels), [], 'a request went to the other address');
      assert.equal(await api.keys.get(other), undefined);
    } finally {
      await setSetting('articleAudio', 'service.baseUrl', own);
    }
    assert.equal(await api.keys.get(own), KEY, 'the key of the first service was lost');
  });
});
