// The extension after a week of real use (issue 16), in real VS Code against the real local engine: removing a
// running job cancels it, a failed job shows its own error and log lines with a fix that fits, Retry takes the failed
// row's place, Clear Finished / Clear Failed, same titles told apart, several Explorer files become one job each,
// `example.com/page` gets its https://, Use Local Engine re-sends a failed conversion, and the views say which
// engine is in use.
import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { Commands } from '../../../src/command-ids';
import { ExtensionLog } from '../../../src/connection/log';
import type { ArticleAudioApi } from '../../../src/extension';
import type { JobRecord } from '../../../src/jobs/types';
import { article, extensionApi, setSetting, waitFor, waitForEnd } from './helpers';

const workspace = process.env.ARTICLE_AUDIO_TEST_WORKSPACE ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';

describe('Everyday use (issue 16)', function () {
  this.timeout(240_000);
  let api: ArticleAudioApi;
  let server: http.Server;
  let base: string;

  before(async () => {
    api = await extensionApi();
    await setSetting('articleAudio', 'model', 'article-audio-1-mini');
    await setSetting('articleAudio', 'openPlayerWhenDone', false);
    await setSetting('articleAudio', 'service.baseUrl', undefined);
    server = http.createServer((req, res) => {
      if (req.url === '/story.html')
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
          `<!doctype html><title>Harbour Days</title><article>${article('Harbour Days', 2)
            .replace(/^# .*$/m, '')
            .split('\n\n')
            .map((p) => `<p>${p}</p>`)
            .join('')}</article>`,
        );
      else if (req.url === '/photo.png') res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(64));
      else res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => server?.close());

  async function failedUrlJob(page: string): Promise<JobRecord> {
    const job = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertUrl, `${base}/${page}`);
    assert.ok(job, `no job: ${JSON.stringify(api.notifier.shown.at(-1))}`);
    const done = await waitForEnd(api, job.id);
    assert.equal(done.status, 'failed');
    return done;
  }

  it('says which engine is in use, in the Jobs view and the status bar tooltip; a remote address is shown as text', async () => {
    assert.equal(api.view.description, 'local engine');
    const document = await vscode.workspace.openTextDocument({
      language: 'markdown',
      content: article('Which Engine'),
    });
    await vscode.window.showTextDocument(document);
    const job = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertDocument);
    assert.ok(job);
    await waitFor('the status bar', () => api.statusBar.state.visible);
    assert.match(api.statusBar.state.tooltip, /Using the local engine/);
    await waitForEnd(api, job.id);
    try {
      await setSetting('articleAudio', 'service.baseUrl', 'https://audio.example.test:8443');
      await waitFor(
        'the view to name the remote service',
        () => api.view.description === 'remote service audio.example.test:8443',
      );
      if (api.statusBar.state.visible)
        assert.match(api.statusBar.state.tooltip, /Using the remote service audio\\\.example\\\.test\\:8443/);
    } finally {
      await setSetting('articleAudio', 'service.baseUrl', undefined);
    }
    await waitFor('the view to name the local engine again', () => api.view.description === 'local engine');
  });

  it('removing a running job cancels it on the engine, and the confirmation says so', async () => {
    await setSetting('articleAudio', 'model', 'article-audio-1-pro');
    try {
      const file = path.join(workspace, 'removed-while-running.md');
      writeFileSync(file, article('Removed While Running', 40));
      const job = await vscode.commands.executeCommand<JobRecord | undefined>(
        Commands.convertDocument,
        vscode.Uri.file(file),
      );
      assert.ok(job);
      await waitFor('the job to start processing', () => api.jobs.get(job.id)?.status === 'processing');
      const shown = api.notifier.shown.length;
      api.notifier.answerNextConfirm = 'Cancel Job and Remove';
      assert.equal(await vscode.commands.executeCommand(Commands.removeJob, job.id), true);
      const question = api.notifier.shown.slice(shown)[0];
      assert.ok(question, 'no confirmation');
      assert.match(question.message, /still running\. Cancel it and remove it/);
      assert.deepEqual(question.actions, ['Cancel Job and Remove']);
      assert.equal(api.jobs.get(job.id), undefined, 'the job is still listed');
      // The engine itself ended it: the job is failed with code cancelled there, not left running.
      const client = await api.connection.client('local');
      const state = await waitFor('the engine to end the job', async () => {
        const current = await client.getJob(job.id);
        return current.status === 'failed' ? current : undefined;
      });
      assert.equal(state.error?.code, 'cancelled');
    } finally {
      await setSetting('articleAudio', 'model', 'article-audio-1-mini');
    }
  });

  it('a failed job, clicked: its own error with a fix that fits (no Retry first for a missing page), and its own log lines', async () => {
    const failed = await failedUrlJob('gone.html');
    assert.equal(failed.error?.code, 'fetch_failed');
    const ended = api.notifier.shown.filter((n) => n.message.includes(failed.title) && n.message.includes('failed'));
    assert.ok(ended.length > 0, 'the failure was not announced');
    assert.notEqual(ended.at(-1)?.actions[0], 'Retry', `actions: ${ended.at(-1)?.actions.join(', ')}`);

    const item = api.tree.getTreeItem(api.jobs.get(failed.id) as JobRecord);
    assert.equal(item.command?.command, Commands.showJobError);
    const shown = api.notifier.shown.length;
    await vscode.commands.executeCommand(item.command.command, ...((item.command.arguments ?? []) as unknown[]));
    const notice = api.notifier.shown.slice(shown)[0];
    assert.ok(notice, 'clicking the failed job said nothing');
    assert.match(notice.message, /\(fetch_failed\).*404/);
    assert.deepEqual(notice.actions.slice(0, 2), ['Convert Another URL…', 'Open in Browser']);
    const log = await waitFor('the job log document', () =>
      vscode.window.visibleTextEditors
        .map((editor) => editor.document)
        .find((document) => document.uri.scheme === 'article-audio-log'),
    );
    const lines = log.getText().trim().split('\n');
    assert.ok(lines.length >= 2, log.getText());
    assert.ok(
      lines.every((line) => line.includes(failed.id) || line.includes(`[job ${failed.id.slice(-8)}]`)),
      `lines of other jobs:\n${log.getText()}`,
    );
    assert.ok(lines.some((line) => /failed \(fetch_failed\)/.test(line)));

    // After a reload the lines are still there: a new log (as a reloaded window has) reads the ones kept on disk.
    const channel = vscode.window.createOutputChannel('Article Audio reload check', { log: true });
    try {
      const reloaded = new ExtensionLog(channel);
      reloaded.keepFailedJobsIn(path.join(api.storageUri.fsPath, 'job-logs'));
      const again = await reloaded.provideTextDocumentContent(log.uri);
      assert.equal(again.trim(), log.getText().trim(), 'the failed job has other lines after a reload');
    } finally {
      channel.dispose();
    }

    // With two columns open, the log opens in one of them: never a third column.
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const note = await vscode.workspace.openTextDocument({ content: 'notes' });
    await vscode.window.showTextDocument(note, vscode.ViewColumn.One);
    await vscode.window.showTextDocument(note, { viewColumn: vscode.ViewColumn.Two, preserveFocus: false });
    assert.equal(vscode.window.tabGroups.all.length, 2);
    await vscode.commands.executeCommand(Commands.showJobError, failed.id);
    await waitFor('the job log document again', () =>
      vscode.window.visibleTextEditors.find((editor) => editor.document.uri.scheme === 'article-audio-log'),
    );
    assert.equal(vscode.window.tabGroups.all.length, 2, 'the job log opened a third column');

    // A wrong content type is no case for Retry either.
    const image = await failedUrlJob('photo.png');
    const click = api.notifier.shown.length;
    await vscode.commands.executeCommand(Commands.showJobError, image.id);
    assert.equal(api.notifier.shown.slice(click)[0]?.actions[0], 'Convert Another URL…');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('Remove Job from List on several selected rows removes them all (the view passes the clicked row and the selection)', async () => {
    const one = await failedUrlJob('gone-one.html');
    const two = await failedUrlJob('gone-two.html');
    const other = await failedUrlJob('gone-three.html');
    const removed = await vscode.commands.executeCommand<boolean>(Commands.removeJob, one, [one, two]);
    assert.equal(removed, true);
    assert.equal(api.jobs.get(one.id), undefined, 'the clicked row is still there');
    assert.equal(api.jobs.get(two.id), undefined, 'the other selected row is still there');
    assert.ok(api.jobs.get(other.id), 'a row that was not selected was removed');
    // A right-click on a row outside the selection acts on that row alone, as VS Code's own views do.
    await vscode.commands.executeCommand<boolean>(Commands.removeJob, other, [one, two]);
    assert.equal(api.jobs.get(other.id), undefined);
  });

  it('Retry replaces the failed row instead of adding one; Clear Failed and Clear Finished empty the list by kind', async () => {
    const failed = await failedUrlJob('missing-page.html');
    const count = api.jobs.all().length;
    const again = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.retryJob, failed.id);
    assert.ok(again);
    assert.notEqual(again.id, failed.id);
    assert.equal(api.jobs.get(failed.id), undefined, 'the failed row is still there');
    assert.equal(api.jobs.all().length, count, 'Retry added a row');
    await waitForEnd(api, again.id);

    assert.ok(api.jobs.all().some((job) => job.status === 'failed'));
    assert.ok(api.jobs.all().some((job) => job.status === 'succeeded'));
    await vscode.commands.executeCommand(Commands.clearFailed);
    assert.ok(!api.jobs.all().some((job) => job.status === 'failed'), 'failed jobs are left');
    assert.ok(
      api.jobs.all().some((job) => job.status === 'succeeded'),
      'Clear Failed removed finished jobs',
    );
    await vscode.commands.executeCommand(Commands.clearFinished);
    assert.ok(!api.jobs.all().some((job) => job.status === 'succeeded'), 'finished jobs are left');
  });

  it('several files selected in the Explorer: one job each, and the same title twice is told apart by time', async () => {
    const first = path.join(workspace, 'tides-one.md');
    const second = path.join(workspace, 'tides-two.md');
    writeFileSync(first, article('Tides', 1));
    writeFileSync(second, article('Tides', 2));
    const uris = [vscode.Uri.file(first), vscode.Uri.file(second)];
    const before = new Set(api.jobs.all().map((job) => job.id));
    // The Explorer calls a context-menu command with the clicked file and every selected one.
    await vscode.commands.executeCommand(Commands.convertDocument, uris[0], uris);
    const created = api.jobs.all().filter((job) => !before.has(job.id));
    assert.equal(created.length, 2, `jobs: ${created.map((job) => job.title).join(', ')}`);
    assert.deepEqual(created.map((job) => job.source.documentUri).sort(), uris.map((uri) => uri.toString()).sort());
    for (const job of created) await waitForEnd(api, job.id);
    for (const job of created) {
      const item = api.tree.getTreeItem(api.jobs.get(job.id) as JobRecord);
      assert.match(
        String(item.description),
        /^Mini · \d+:\d\d · .* · \d\d:\d\d$/,
        `the two "Tides" rows look alike: ${String(item.description)}`,
      );
    }
  });

  it('the URL box takes example.com/page: https:// is added', async () => {
    const job = await vscode.commands.executeCommand<JobRecord | undefined>(
      Commands.convertUrl,
      `127.0.0.1:${new URL(base).port}/story.html`,
    );
    assert.ok(job, `no job: ${JSON.stringify(api.notifier.shown.at(-1))}`);
    assert.equal(job.source.url, `https://127.0.0.1:${new URL(base).port}/story.html`);
    await waitForEnd(api, job.id);
  });

  it('a conversion that failed on an unreachable remote service: Use Local Engine switches and sends it again', async () => {
    const unreachable = 'http://127.0.0.1:1';
    await setSetting('articleAudio', 'service.baseUrl', unreachable);
    try {
      await api.keys.set(unreachable, 'some-key-for-an-unreachable-service');
      const document = await vscode.workspace.openTextDocument({
        language: 'markdown',
        content: article('Sent Again Locally'),
      });
      await vscode.window.showTextDocument(document);
      const shown = api.notifier.shown.length;
      assert.equal(await vscode.commands.executeCommand(Commands.convertDocument), undefined);
      const error = api.notifier.shown.slice(shown).find((n) => n.message.includes('Sent Again Locally'));
      assert.ok(error, 'the failure was not shown');
      const useLocal = error.fixes?.find((fix) => fix.title === 'Use Local Engine');
      assert.ok(useLocal, `actions: ${error.actions.join(', ')}`);
      const before = new Set(api.jobs.all().map((job) => job.id));
      const again = (await useLocal.run()) as JobRecord | undefined;
      assert.equal(api.connection.current(), 'local');
      assert.ok(again, 'Use Local Engine did not send the conversion again');
      assert.ok(!before.has(again.id));
      assert.equal(again.service, 'local');
      assert.equal(again.title, 'Sent Again Locally');
      assert.equal((await waitForEnd(api, again.id)).status, 'succeeded');
    } finally {
      await api.keys.clear(unreachable).catch(() => undefined);
      await setSetting('articleAudio', 'service.baseUrl', undefined);
    }
  });
});
