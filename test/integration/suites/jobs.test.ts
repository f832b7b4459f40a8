// End to end in real VS Code against the real local engine: each way to start a job, the status bar and the tree
// along the way, cancel, input checks, and the engine being restarted after it dies.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { Commands, Views } from '../../../src/command-ids';
import type { ArticleAudioApi } from '../../../src/extension';
import type { JobRecord } from '../../../src/jobs/types';
import { zipOf } from '../../support/zip-file';
import { scannedPdf, slideDeck } from '../../support/pdf-layouts';
import { article, EXTENSION_ID, extensionApi, setSetting, waitFor, waitForEnd } from './helpers';

const workspace = process.env.ARTICLE_AUDIO_TEST_WORKSPACE ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';

function assertPlayableFiles(job: JobRecord): void {
  assert.equal(job.status, 'succeeded', `job ended ${job.status}: ${JSON.stringify(job.error)}`);
  assert.ok(job.files, 'the finished job has no cached files');
  const audio = readFileSync(job.files.audio);
  assert.ok(audio.length > 4000, `the MP3 has only ${audio.length} bytes`);
  // An MP3 starts with an ID3 tag or a frame sync.
  assert.ok(
    audio.subarray(0, 3).toString('latin1') === 'ID3' || (audio[0] === 0xff && ((audio[1] ?? 0) & 0xe0) === 0xe0),
    'the cached audio is not an MP3',
  );
  assert.ok(job.files.transcript, 'no transcript was cached');
  assert.match(readFileSync(job.files.transcript, 'utf8'), /^WEBVTT/);
  assert.ok(job.durationS !== undefined && job.durationS > 1, `duration ${job.durationS}`);
}

describe('Jobs on the local engine', function () {
  this.timeout(240_000);
  let api: ArticleAudioApi;

  before(async () => {
    api = await extensionApi();
    await setSetting('articleAudio', 'model', 'article-audio-1-mini');
    await setSetting('articleAudio', 'openPlayerWhenDone', false);
    await setSetting('articleAudio', 'service.baseUrl', undefined);
  });

  it('converts the selection: status bar and tree follow the job to finished audio in the cache', async () => {
    const document = await vscode.workspace.openTextDocument({
      language: 'markdown',
      content: `Some notes before.\n\n${article('Rivers and Towns')}\nNotes after.`,
    });
    const editor = await vscode.window.showTextDocument(document);
    const text = document.getText();
    const start = document.positionAt(text.indexOf('# Rivers'));
    const end = document.positionAt(text.indexOf('Notes after.'));
    editor.selection = new vscode.Selection(start, end);

    const seen: string[] = [];
    const subscription = api.jobs.onDidChange(() => seen.push(api.statusBar.state.text));
    const job = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertSelection);
    assert.ok(job, 'the command returned no job');
    assert.equal(job.title, 'Rivers and Towns');
    assert.equal(job.source.kind, 'selection');
    assert.equal(job.source.range?.startLine, start.line);
    assert.equal(job.modelId, 'article-audio-1-mini');
    assert.ok(api.statusBar.state.visible, 'the status bar item is hidden while a job runs');

    const done = await waitForEnd(api, job.id);
    subscription.dispose();
    assertPlayableFiles(done);
    assert.ok(
      seen.some((text) => /^\$\(sync~spin\)( \d+%| queued)? Rivers and Towns$/.test(text)),
      `the status bar never showed the running job: ${JSON.stringify([...new Set(seen)])}`,
    );
    assert.ok(
      seen.some((text) => /\d+%/.test(text)),
      `the status bar never showed a percentage: ${JSON.stringify([...new Set(seen)])}`,
    );
    // Finished: a "ready" item, and the tree offers playing it.
    assert.match(api.statusBar.state.text, /\$\(unmute\) Rivers and Towns/);
    const item = api.tree.getTreeItem(api.jobs.get(job.id) as JobRecord);
    assert.equal(item.contextValue, 'job.succeeded');
    assert.match(String(item.description), /^Mini · \d+:\d\d · /);
    assert.equal(item.command?.command, Commands.openPlayer);
    assert.ok(api.jobs.playable().some((j) => j.id === job.id));
  });

  it('converts a Markdown file given by the explorer, titled by its first heading', async () => {
    const file = path.join(workspace, 'field-notes.md');
    writeFileSync(file, article('Field Notes on Rivers', 2));
    const job = await vscode.commands.executeCommand<JobRecord | undefined>(
      Commands.convertDocument,
      vscode.Uri.file(file),
    );
    assert.ok(job);
    assert.equal(job.source.kind, 'document');
    assert.equal(job.source.documentUri, vscode.Uri.file(file).toString());
    const done = await waitForEnd(api, job.id);
    assertPlayableFiles(done);
    assert.equal(done.title, 'Field Notes on Rivers');
  });

  it('converts a PDF file given by the explorer: its text read here, sent with its headings, titled by the PDF', async () => {
    const file = path.join(workspace, 'quiet-machines.pdf');
    const deck = slideDeck();
    writeFileSync(file, deck.pdf);
    const job = await vscode.commands.executeCommand<JobRecord | undefined>(
      Commands.convertDocument,
      vscode.Uri.file(file),
    );
    assert.ok(job, 'the command returned no job');
    assert.equal(job.title, 'Quiet Machines');
    assert.equal(job.source.kind, 'document');
    assert.equal(job.source.documentUri, vscode.Uri.file(file).toString());
    const done = await waitForEnd(api, job.id);
    assertPlayableFiles(done);
    const read = readFileSync(done.files?.article ?? '', 'utf8');
    let at = 0;
    for (const sentence of deck.inOrder) {
      const found = read.indexOf(sentence, at);
      assert.ok(found >= 0, `"${sentence}" is missing or out of order in:\n${read}`);
      at = found;
    }
    assert.match(read, /## How they work/);
    assert.doesNotMatch(read, /Lisbon/);
  });

  it('converts a URL served on loopback and takes the article title from the page', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/story.html') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/story.html`;
      const job = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertUrl, url);
      assert.ok(job);
      assert.equal(job.source.url, url);
      const done = await waitForEnd(api, job.id);
      assertPlayableFiles(done);
      assert.equal(done.title, 'The Lighthouse Keeper');
      assert.ok(
        done.files?.article && readFileSync(done.files.article, 'utf8').includes('lighthouse'),
        'the article as read was not cached',
      );
    } finally {
      server.close();
    }
  });

  it('refuses files that are not text (a PNG, a WebAssembly module, a zip, a PDF without text), saying what each looks like, without submitting anything', async () => {
    const repo = vscode.extensions.getExtension(EXTENSION_ID)?.extensionPath ?? '';
    const files: [string, Buffer, RegExp][] = [
      ['icon.png', readFileSync(path.join(repo, 'media', 'icon.png')), /icon\.png looks like a PNG image, not text/],
      [
        'module.wasm',
        readFileSync(path.join(repo, 'dist', 'flite.wasm')).subarray(0, 4000),
        /module\.wasm looks like a WebAssembly module/,
      ],
      ['notes.zip', zipOf({ 'notes.md': article('Zipped', 2) }), /notes\.zip looks like a ZIP archive/],
      // A PDF is read by the PDF reader (issue 27); one whose pages are pictures has no text to read.
      ['scan.pdf', scannedPdf(), /scan\.pdf has no text layer \(is it a scan\?\)/],
    ];
    const before = api.jobs.all().length;
    for (const [name, bytes, message] of files) {
      const file = path.join(workspace, name);
      writeFileSync(file, bytes);
      const shown = api.notifier.shown.length;
      const job = await vscode.commands.executeCommand<JobRecord | undefined>(
        Commands.convertDocument,
        vscode.Uri.file(file),
      );
      assert.equal(job, undefined, name);
      assert.match(
        api.notifier.shown
          .slice(shown)
          .map((s) => s.message)
          .join('\n'),
        message,
      );
    }
    assert.equal(api.jobs.all().length, before, 'nothing was submitted');
  });

  it('refuses a selection that is too short, without submitting anything', async () => {
    const document = await vscode.workspace.openTextDocument({ language: 'plaintext', content: 'Too short to read.' });
    const editor = await vscode.window.showTextDocument(document);
    editor.selection = new vscode.Selection(0, 0, 0, 18);
    const before = api.jobs.all().length;
    const shown = api.notifier.shown.length;
    const job = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertSelection);
    assert.equal(job, undefined);
    assert.equal(api.jobs.all().length, before);
    const message = api.notifier.shown
      .slice(shown)
      .map((s) => s.message)
      .join('\n');
    assert.match(message, /18 characters; an article needs at least 50/);
  });

  it('retries a job, copies its id, opens it in the player, and removes it with its cached audio', async () => {
    const file = path.join(workspace, 'second-try.md');
    writeFileSync(file, article('A Second Try'));
    const first = await vscode.commands.executeCommand<JobRecord | undefined>(
      Commands.convertDocument,
      vscode.Uri.file(file),
    );
    assert.ok(first);
    assertPlayableFiles(await waitForEnd(api, first.id));

    // Retry makes a new job from the same text (kept in the cache), with the same title and model.
    const again = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.retryJob, first.id);
    assert.ok(again, 'retry returned no job');
    assert.notEqual(again.id, first.id);
    assert.equal(again.title, 'A Second Try');
    assert.equal(again.modelId, first.modelId);
    const done = await waitForEnd(api, again.id);
    assertPlayableFiles(done);

    await vscode.commands.executeCommand(Commands.copyJobId, again.id);
    assert.equal(await vscode.env.clipboard.readText(), again.id);

    await vscode.commands.executeCommand(Commands.openPlayer, again.id);
    await waitFor('the player tab', () =>
      vscode.window.tabGroups.all.some((group) =>
        group.tabs.some(
          (tab) =>
            tab.input instanceof vscode.TabInputWebview &&
            tab.input.viewType.endsWith(Views.player) &&
            tab.label.includes('A Second Try'),
        ),
      ),
    );

    const audioDir = path.dirname(done.files?.audio ?? '');
    assert.ok(existsSync(audioDir));
    await vscode.commands.executeCommand(Commands.removeJob, again.id);
    assert.equal(api.jobs.get(again.id), undefined, 'the job is still listed');
    assert.ok(!existsSync(audioDir), 'its cached audio is still on disk');
    assert.ok(api.jobs.get(first.id), 'removing one job removed another');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('switches to a remote service and back to the local engine by command', async () => {
    try {
      // Given an address, Use Remote Service sets it without asking; it has no key yet, so it says false.
      assert.equal(
        await vscode.commands.executeCommand(Commands.useRemoteService, 'https://audio.example.test/'),
        false,
      );
      assert.equal(
        vscode.workspace.getConfiguration('articleAudio').get('service.baseUrl'),
        'https://audio.example.test',
      );
      assert.equal(api.connection.current(), 'https://audio.example.test');
      await vscode.commands.executeCommand(Commands.useLocalEngine);
      assert.equal(api.connection.current(), 'local');
    } finally {
      await setSetting('articleAudio', 'service.baseUrl', undefined);
    }
  });

  it('cancels a running job: it ends failed with code cancelled and no audio', async () => {
    await setSetting('articleAudio', 'model', 'article-audio-1-pro');
    try {
      const file = path.join(workspace, 'long-read.md');
      writeFileSync(file, article('A Long Read', 40));
      const job = await vscode.commands.executeCommand<JobRecord | undefined>(
        Commands.convertDocument,
        vscode.Uri.file(file),
      );
      assert.ok(job);
      await waitFor('the job to start processing', () => api.jobs.get(job.id)?.status === 'processing');
      await vscode.commands.executeCommand(Commands.cancelJob, job.id);
      const done = await waitForEnd(api, job.id);
      assert.equal(done.status, 'failed');
      assert.equal(done.error?.code, 'cancelled');
      assert.equal(done.files, undefined);
      assert.equal(api.tree.getTreeItem(done).contextValue, 'job.failed');
    } finally {
      await setSetting('articleAudio', 'model', 'article-audio-1-mini');
    }
  });

  it('starts the local engine again after it is killed, says so, and the next job succeeds', async () => {
    const pid = api.engine.pid;
    assert.ok(pid, 'the local engine is not running after the jobs above');
    const shown = api.notifier.shown.length;
    process.kill(pid, 'SIGKILL');
    await waitFor('the engine to restart', () => api.engine.pid !== undefined && api.engine.pid !== pid, 60_000);
    const messages = api.notifier.shown
      .slice(shown)
      .map((s) => s.message)
      .join('\n');
    assert.match(messages, /The local engine stopped unexpectedly \(SIGKILL\)\. It is starting again/);
    const document = await vscode.workspace.openTextDocument({
      language: 'markdown',
      content: article('After the Restart', 1),
    });
    await vscode.window.showTextDocument(document);
    const job = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertDocument);
    assert.ok(job);
    assertPlayableFiles(await waitForEnd(api, job.id));
  });
});

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>The Lighthouse Keeper | Coast Weekly</title></head>
<body>
<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/subscribe">Subscribe now</a></nav>
<article>
<h1>The Lighthouse Keeper</h1>
<p>For forty years the lighthouse on the point was kept by one family. Every evening someone climbed the stairs, cleaned the glass and lit the lamp before the ships came round the cape.</p>
<p>The work was quiet but never simple. Storms broke windows, fog hid the beam, and supplies came by boat only when the sea allowed it.</p>
<p>Today the light runs by itself, but the old keeper still walks up the hill each evening to watch it turn on.</p>
</article>
<footer>Copyright Coast Weekly. All rights reserved.</footer>
</body></html>`;
