// Convert in parts and the listening queue (issue 16 items 9 and 12), in real VS Code against the real local engine:
// a document over the length limit is offered in parts (one job each, every part under the limit, nothing lost) that
// queue themselves in order; Play Next and Add to Queue order the queue, the Jobs view shows it, and removing a job
// takes it out of the queue.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { Commands } from '../../../src/command-ids';
import type { ArticleAudioApi } from '../../../src/extension';
import type { JobRecord } from '../../../src/jobs/types';
import { countCharacters, TEXT_MAX_LENGTH } from '../../../src/protocol';
import { article, extensionApi, setSetting, waitFor } from './helpers';

describe('Convert in parts and the listening queue (issue 16)', function () {
  this.timeout(240_000);
  let api: ArticleAudioApi;
  const made: string[] = [];

  before(async () => {
    api = await extensionApi();
    await setSetting('articleAudio', 'model', 'article-audio-1-mini');
    await setSetting('articleAudio', 'openPlayerWhenDone', false);
    await setSetting('articleAudio', 'service.baseUrl', undefined);
    api.queue.clear();
  });

  after(async () => {
    // The long parts would run for minutes: cancel what is left.
    for (const id of made) {
      const job = api.jobs.get(id);
      if (job && job.status !== 'succeeded' && job.status !== 'failed')
        await api.jobs.cancel(id).catch(() => undefined);
    }
    api.queue.clear();
  });

  it('offers a document over 100,000 characters in parts, one job each, queued in order', async () => {
    const sections = Array.from(
      { length: 24 },
      (_, i) =>
        `## Chapter ${i + 1}\n\n${'The river kept its course through the valley, slow and patient. '.repeat(140).trim()}`,
    );
    const content = `# The Long River\n\n${sections.join('\n\n')}\n`;
    assert.ok(countCharacters(content) > 2 * TEXT_MAX_LENGTH, 'the document needs three parts');
    // An article queued before: the parts go ahead of it (the listener asked for this one now).
    const older = await vscode.workspace.openTextDocument({
      language: 'markdown',
      content: '# Older Story\n\nAn article queued earlier, waiting for its turn in the listening queue.\n',
    });
    await vscode.window.showTextDocument(older);
    const olderJob = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertDocument);
    assert.ok(olderJob, `no job for the older article: ${JSON.stringify(api.notifier.shown.at(-1))}`);
    made.push(olderJob.id);
    api.queue.add(olderJob.id);
    const document = await vscode.workspace.openTextDocument({ language: 'markdown', content });
    await vscode.window.showTextDocument(document);
    api.notifier.answerNextConfirm = 'Convert in 3 Parts';
    const first = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertDocument);
    const asked = api.notifier.shown.find((shown) => shown.actions.includes('Convert in 3 Parts'));
    assert.ok(asked, `no offer to convert in parts: ${JSON.stringify(api.notifier.shown.at(-1))}`);
    assert.match(
      asked.message,
      /has [\d,]+ characters; the service takes at most 100,000 in one job\. It can be converted in 3 parts/,
    );
    assert.ok(first, `no job: ${JSON.stringify(api.notifier.shown.at(-1))}`);
    const parts = api.jobs.all().filter((job) => job.title.startsWith('The Long River (part '));
    made.push(...parts.map((job) => job.id));
    assert.deepEqual(
      parts.map((job) => job.title).sort(),
      [1, 2, 3].map((i) => `The Long River (part ${i} of 3)`),
    );
    const byPart = [1, 2, 3].map((i) => parts.find((job) => job.title.endsWith(`(part ${i} of 3)`)) as JobRecord);
    assert.equal(first.id, byPart[0]?.id);
    assert.deepEqual(
      [...api.queue.items()],
      [...byPart.map((job) => job.id), olderJob.id],
      'the parts queue themselves in order, ahead of the article queued before',
    );
    assert.match(api.notifier.shown.at(-1)?.message ?? '', /in 3 parts\. They are next in your listening queue/);
    // The tree shows the order.
    assert.match(String(api.tree.getTreeItem(byPart[0] as JobRecord).description), /^Up next · /);
    assert.match(String(api.tree.getTreeItem(byPart[2] as JobRecord).description), /^Queued #3 · /);
    assert.match(String(api.tree.getTreeItem(byPart[1] as JobRecord).contextValue), /^job\.\w+\+inQueue$/);
    // The engine accepted all three (a part over its limit gets a 422); they would run for minutes.
    for (const job of byPart) await api.jobs.cancel(job.id);
  });

  it('declining the offer sends nothing', async () => {
    const content = `# Too Long\n\n${'A sentence that goes on. '.repeat(4200)}`;
    const document = await vscode.workspace.openTextDocument({ language: 'markdown', content });
    await vscode.window.showTextDocument(document);
    const before = api.jobs.all().length;
    api.notifier.answerNextConfirm = 'No';
    const job = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertDocument);
    assert.equal(job, undefined);
    assert.equal(api.jobs.all().length, before);
  });

  it('Play Next puts a job first, Add to Queue last; Remove from Queue and removing the job take it out', async () => {
    api.queue.clear();
    const jobs: JobRecord[] = [];
    for (const title of ['Queue One', 'Queue Two', 'Queue Three']) {
      const document = await vscode.workspace.openTextDocument({ language: 'markdown', content: article(title, 1) });
      await vscode.window.showTextDocument(document);
      const job = await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertDocument);
      assert.ok(job);
      made.push(job.id);
      jobs.push(job);
    }
    const [one, two, three] = jobs as [JobRecord, JobRecord, JobRecord];
    await vscode.commands.executeCommand(Commands.addToQueue, one);
    await vscode.commands.executeCommand(Commands.addToQueue, two);
    await vscode.commands.executeCommand(Commands.playNext, three);
    assert.deepEqual([...api.queue.items()], [three.id, one.id, two.id]);
    // Several rows selected in the tree: the clicked one and the selection.
    await vscode.commands.executeCommand(Commands.playNext, two, [two, one]);
    assert.deepEqual([...api.queue.items()], [two.id, one.id, three.id]);
    await vscode.commands.executeCommand(Commands.removeFromQueue, one.id);
    assert.deepEqual([...api.queue.items()], [two.id, three.id]);
    assert.equal(api.tree.getTreeItem(api.jobs.get(one.id) as JobRecord).contextValue?.includes('+inQueue'), false);
    api.notifier.answerNextConfirm = 'Cancel Job and Remove';
    await vscode.commands.executeCommand(Commands.removeJob, two.id);
    api.notifier.answerNextConfirm = undefined;
    await waitFor('the queue to forget the removed job', () => !api.queue.has(two.id) || undefined);
    assert.deepEqual([...api.queue.items()], [three.id]);
  });
});
