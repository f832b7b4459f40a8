// Issue 23 in real VS Code: the extension pointed at a hostile remote service (the fault server of the client's own
// tests, on loopback, started here), checked as a user sees it: the job in the tree, the notification, the log, the
// files in the extension's storage. An endless audio body ends the job failed with a clear message and leaves no
// partial file; a status that goes back after the job succeeded leaves it succeeded and playable; the API key, which
// the service even echoes in a log line, never reaches the log.
import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { Commands, Views } from '../../../src/command-ids';
import type { ArticleAudioApi } from '../../../src/extension';
import type { JobRecord } from '../../../src/jobs/types';
import {
  type FaultServer,
  jobBody,
  openSse,
  sendEnvelope,
  sendErrors,
  startFaultServer,
} from '../../support/fault-server';
import { article, extensionApi, setSetting, waitFor, waitForEnd } from './helpers';

const KEY = `hostile-key-${Math.random().toString(36).slice(2)}-integration`;
/** Far above any cap the client may have for 5 s of audio; the server stops writing here, so no run fills the disk. */
const ENDLESS_GUARD_BYTES = 64 * 1024 * 1024;

/** A few MPEG-1 Layer III frames (128 kbps, 44.1 kHz, silent): what the player is given for the job that went back. */
function silentMp3(frames = 40): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
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

describe('A hostile remote service (issue 23)', function () {
  this.timeout(120_000);
  let api: ArticleAudioApi;
  let server: FaultServer;
  const jobs: string[] = [];

  /** Only requests with the key are answered, as a real service would; the key check of Set API Key gets a 404. */
  const authorized = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.headers.authorization === `Bearer ${KEY}`) return true;
    sendErrors(res, 401, [{ code: 'unauthorized', message: 'Missing or wrong API token.' }]);
    return false;
  };

  const logText = (): string =>
    filesUnder(path.dirname(api.logUri.fsPath))
      .filter((file) => file.endsWith('.log'))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');

  /** Submits the open document as the user does; the service answers with `id`. */
  async function convert(id: string, title: string): Promise<JobRecord> {
    server.on('POST', '/v1/article-to-audio', (req, res) => {
      if (authorized(req, res)) sendEnvelope(res, 202, { job_id: id });
    });
    const document = await vscode.workspace.openTextDocument({ language: 'markdown', content: article(title, 2) });
    await vscode.window.showTextDocument(document);
    const job = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertDocument);
    assert.ok(job, `no job: ${JSON.stringify(api.notifier.shown.at(-1))}`);
    assert.equal(job.id, id);
    jobs.push(id);
    return job;
  }

  before(async () => {
    api = await extensionApi();
    server = await startFaultServer();
    server.on('GET', /^\/v1\/jobs\/key-check-[^/]+$/, (req, res) => {
      if (authorized(req, res)) sendErrors(res, 404, [{ code: 'not_found', message: 'No such job.' }]);
    });
    await setSetting('articleAudio', 'model', 'article-audio-1-mini');
    await setSetting('articleAudio', 'openPlayerWhenDone', false);
    await setSetting('articleAudio', 'service.baseUrl', server.url);
    assert.equal(api.connection.current(), server.url);
    assert.equal(await vscode.commands.executeCommand(Commands.setApiKey, KEY), true, 'the key was not saved');
  });

  after(async () => {
    for (const id of jobs) await api.jobs.remove(id).catch(() => undefined);
    await vscode.commands.executeCommand(Commands.clearApiKey);
    await setSetting('articleAudio', 'service.baseUrl', undefined);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await server?.close();
  });

  it('an endless audio body: the job fails with a clear message, said in the tree, a notification and the log, and no partial file is kept', async () => {
    const id = 'hostile-endless-1';
    const results = [{ url: `/v1/jobs/${id}/outputs/audio.mp3`, content_type: 'audio/mpeg', duration_s: 5 }];
    server.on('GET', `/v1/jobs/${id}`, (req, res) => {
      if (authorized(req, res)) sendEnvelope(res, 200, jobBody(id, 'succeeded', { outputs: { results } }));
    });
    server.on('GET', `/v1/jobs/${id}/stream`, (req, res) => {
      if (!authorized(req, res)) return;
      const sse = openSse(res);
      sse.send({ id: '1', event: 'status', data: { status: 'processing', progress: 0.5 } });
      sse.send({ id: '2', event: 'status', data: { status: 'succeeded', progress: 1 } });
      sse.send({ id: '3', event: 'result', data: { images: [], results } });
      sse.send({ id: '4', event: 'end', data: 'succeeded' });
      sse.end();
    });
    let sent = 0;
    server.on('GET', `/v1/jobs/${id}/outputs/audio.mp3`, (req, res) => {
      if (!authorized(req, res)) return;
      // No Content-Length, and it never ends: the only limit is the client's.
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      const chunk = Buffer.alloc(64 * 1024, 0xaa);
      const pump = () => {
        while (!res.destroyed && sent < ENDLESS_GUARD_BYTES && res.write(chunk)) sent += chunk.length;
        if (!res.destroyed && sent < ENDLESS_GUARD_BYTES) res.once('drain', pump);
      };
      pump();
    });

    const shown = api.notifier.shown.length;
    const job = await convert(id, 'Endless Audio');
    const done = await waitForEnd(api, job.id, 45_000);

    // The job: failed, with the client's own words, one line.
    assert.equal(done.status, 'failed', `the job ended ${done.status}`);
    assert.equal(done.error?.code, 'download_too_large');
    const message = done.error?.message ?? '';
    assert.match(message, /was stopped: the service sent more than the 2\.3 MB allowed/);
    assert.match(message, /nothing was kept/);
    assert.ok(sent < 20_000_000, `the service wrote ${sent} bytes before the download stopped`);

    // The tree: marked failed, the message in its tooltip, a click shows why.
    const item = api.tree.getTreeItem(api.jobs.get(id) as JobRecord);
    assert.equal(item.contextValue, 'job.failed');
    assert.match(String(item.description), /^Mini · Failed · /);
    // The tooltip is Markdown, with the service's and the client's text escaped.
    const markdown = item.tooltip instanceof vscode.MarkdownString ? item.tooltip.value : String(item.tooltip);
    const tooltip = markdown.replace(/\\(.)/g, '$1');
    assert.match(tooltip, /was stopped: the service sent more than the 2\.3 MB allowed/);
    assert.equal(item.command?.command, Commands.showJobError);

    // The notification: the title, the code and the reason, with Show Log.
    const notice = await waitFor('the failure notification', () =>
      api.notifier.shown.slice(shown).find((n) => n.message.startsWith('"Endless Audio" failed')),
    );
    assert.match(notice.message, /failed \(download_too_large\): .*was stopped: the service sent more than/);
    assert.ok(notice.actions.includes('Show Log'), `actions: ${notice.actions.join(', ')}`);

    // The log says it too.
    await waitFor('the failure in the log', () => logText().includes(`job ${id} failed (download_too_large)`), 10_000);

    // Nothing of the audio is kept: the job's cache folder has only the text kept for Retry, and no .part anywhere.
    const cacheDir = path.join(api.storageUri.fsPath, 'audio', id);
    assert.deepEqual(
      readdirSync(cacheDir).filter((name) => name !== 'input.txt'),
      [],
    );
    const partial = filesUnder(api.storageUri.fsPath).filter((file) => file.endsWith('.part'));
    assert.deepEqual(partial, [], 'a partial download was left in the extension storage');
    assert.ok(!logText().includes(KEY), 'the API key appears in the log');
    assert.ok(!JSON.stringify(api.notifier.shown).includes(KEY), 'the API key appears in a notification');
  });

  it('a status that goes back after the job succeeded: the job stays succeeded, and its audio is downloaded and plays', async () => {
    const id = 'hostile-back-1';
    const audio = silentMp3();
    const results = [{ url: `/v1/jobs/${id}/outputs/audio.mp3`, content_type: 'audio/mpeg', duration_s: 1 }];
    // The status endpoint never agrees that the job ended.
    server.on('GET', `/v1/jobs/${id}`, (req, res) => {
      if (authorized(req, res)) sendEnvelope(res, 200, { ...jobBody(id, 'processing'), progress: 0.2 });
    });
    server.on('GET', `/v1/jobs/${id}/stream`, (req, res) => {
      if (!authorized(req, res)) return;
      const sse = openSse(res);
      sse.send({ id: '1', event: 'status', data: { status: 'processing', progress: 0.7 } });
      // A service that echoes the request's key back: the log must still not show it.
      sse.send({ id: '2', event: 'log', data: { level: 'info', message: `echoing Authorization: Bearer ${KEY}` } });
      sse.send({ id: '3', event: 'status', data: { status: 'succeeded', progress: 1 } });
      sse.send({ id: '4', event: 'result', data: { images: [], results } });
      sse.send({ id: '5', event: 'status', data: { status: 'processing', progress: 0.1 } });
      // …and the stream stays open, without an end.
    });
    server.on('GET', `/v1/jobs/${id}/outputs/audio.mp3`, (req, res) => {
      if (!authorized(req, res)) return;
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': String(audio.length) });
      res.end(audio);
    });

    const seen: [string, number | undefined][] = [];
    const subscription = api.jobs.onDidChange((record) => {
      if (record?.id === id) seen.push([record.status, record.progress]);
    });
    const shown = api.notifier.shown.length;
    const job = await convert(id, 'Back Again');
    let done: JobRecord;
    try {
      done = await waitForEnd(api, job.id, 45_000);
    } finally {
      subscription.dispose();
    }
    assert.equal(
      done.status,
      'succeeded',
      `${done.status}: ${JSON.stringify(done.error)} (seen ${JSON.stringify(seen)})`,
    );
    assert.ok(done.files, 'no files');
    assert.deepEqual(readFileSync(done.files.audio), audio, 'the cached audio is not what the service sent');
    const progress = seen.map(([, p]) => p ?? 0);
    for (let i = 1; i < progress.length; i++)
      assert.ok(progress[i]! >= progress[i - 1]!, `progress went down: ${JSON.stringify(seen)}`);

    // What the user sees: a ready job with Open Player, and the "ready to play" notification.
    const notice = await waitFor('the ready notification', () =>
      api.notifier.shown.slice(shown).find((n) => n.message.startsWith('"Back Again" is ready to play')),
    );
    assert.ok(notice.actions.includes('Play'), `actions: ${notice.actions.join(', ')}`);
    const item = api.tree.getTreeItem(api.jobs.get(id) as JobRecord);
    assert.equal(item.contextValue, 'job.succeeded');
    assert.equal(item.command?.command, Commands.openPlayer);

    // It stays that way: nothing follows it any more, and a while later it is still succeeded.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.equal(api.jobs.isFollowing(id), false, 'the job is still being followed');
    assert.equal(api.jobs.get(id)?.status, 'succeeded');

    // It plays: the player opens on it.
    await vscode.commands.executeCommand(Commands.openPlayer, id);
    await waitFor('the player tab', () =>
      vscode.window.tabGroups.all.some((group) =>
        group.tabs.some(
          (tab) =>
            tab.input instanceof vscode.TabInputWebview &&
            tab.input.viewType.endsWith(Views.player) &&
            tab.label.includes('Back Again'),
        ),
      ),
    );
    assert.ok(existsSync(done.files.audio));
  });

  it('the API key never reaches the log, though the service echoed it in a log line', async () => {
    assert.ok(jobs.length > 0, 'no job ran, so this check would prove nothing');
    // The echoed line did reach the log (masked), so the check below looks where the key would be.
    const logs = await waitFor('the echoed log line', () => {
      const text = logText();
      return text.includes('echoing Authorization: Bearer') ? text : undefined;
    });
    for (const id of jobs) assert.ok(logs.includes(id), `the log does not mention ${id}`);
    assert.ok(!logs.includes(KEY), 'the API key appears in the log');
    assert.ok(!JSON.stringify(api.jobs.all()).includes(KEY), 'the API key appears in the job list');
    assert.ok(!JSON.stringify(api.notifier.shown).includes(KEY), 'the API key appears in a notification');
  });
});
