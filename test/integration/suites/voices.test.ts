// A speech provider chosen in the settings (issue 25): the local engine reads Pro with an OpenAI-compatible speech
// API (a real HTTP server on loopback that checks each request as OpenAI would), after asking once where the text
// goes; its key comes from the OS keyring into the engine's environment only, never a setting, the engine's command
// line, its voices file or the log.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { Commands } from '../../../src/command-ids';
import type { ArticleAudioApi } from '../../../src/extension';
import type { JobRecord } from '../../../src/jobs/types';
import { type SpeechProvider, startSpeechProvider } from '../../support/speech-provider';
import { article, extensionApi, setSetting, waitFor, waitForEnd } from './helpers';

const KEY = `sk-voice-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;

describe('A speech provider from the settings (issue 25)', function () {
  this.timeout(240_000);
  let api: ArticleAudioApi;
  let provider: SpeechProvider;

  before(async () => {
    api = await extensionApi();
    provider = await startSpeechProvider({ key: KEY });
    await setSetting('articleAudio', 'service.baseUrl', undefined);
    await setSetting('articleAudio', 'model', 'article-audio-1-pro');
    await setSetting('articleAudio', 'openPlayerWhenDone', false);
    await setSetting('articleAudio.voice', 'baseUrl', provider.baseUrl);
    await setSetting('articleAudio.voice', 'model', 'kokoro');
    await setSetting('articleAudio.voice', 'voice', 'af_heart');
    await setSetting('articleAudio.voice', 'models', ['article-audio-1-pro']);
    await setSetting('articleAudio.voice', 'provider', 'openai');
    assert.equal(await vscode.commands.executeCommand<boolean>(Commands.setVoiceKey, KEY), true);
  });

  after(async () => {
    await setSetting('articleAudio.voice', 'provider', undefined);
    for (const name of ['baseUrl', 'model', 'voice', 'models']) await setSetting('articleAudio.voice', name, undefined);
    await setSetting('articleAudio', 'model', 'article-audio-1-mini');
    await vscode.commands.executeCommand(Commands.clearVoiceKey);
    await provider?.close();
  });

  async function convert(title: string, answer: string | undefined): Promise<JobRecord | undefined> {
    const document = await vscode.workspace.openTextDocument({ language: 'markdown', content: article(title, 2) });
    await vscode.window.showTextDocument(document);
    api.notifier.answerNextConfirm = answer;
    try {
      return await vscode.commands.executeCommand<JobRecord | undefined>(Commands.convertDocument);
    } finally {
      api.notifier.answerNextConfirm = undefined;
    }
  }

  it('asks before the first text goes to the provider; declining sends nothing', async () => {
    const shown = api.notifier.shown.length;
    const job = await convert('Not Sent Anywhere', 'Open Voice Settings');
    assert.equal(job, undefined, 'a job was submitted though the question was declined');
    const question = api.notifier.shown.slice(shown).find((n) => n.actions.some((a) => a.startsWith('Send to ')));
    assert.ok(question, `no question: ${JSON.stringify(api.notifier.shown.slice(shown))}`);
    const host = new URL(provider.baseUrl).host;
    assert.match(
      question.message,
      new RegExp(
        `Pro reads with the voice "af_heart" of ${host.replace(/\./g, '\\.')}: the article's text is sent there`,
      ),
    );
    assert.deepEqual(question.actions, [`Send to ${host}`, 'Open Voice Settings']);
    assert.equal(provider.requests.length, 0);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it('reads Pro with the provider voice once agreed (asked once), with the key from the keyring and nowhere else', async () => {
    const host = new URL(provider.baseUrl).host;
    const job = await convert('Read By The Provider', `Send to ${host}`);
    assert.ok(job, `no job: ${JSON.stringify(api.notifier.shown.at(-1))}`);
    const done = await waitForEnd(api, job.id, 180_000);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    assert.ok(provider.requests.length > 0, 'the provider was not asked');
    assert.deepEqual(provider.refused, []);
    assert.ok(
      provider.requests.every(
        (r) => r.authorization === `Bearer ${KEY}` && r.voice === 'af_heart' && r.model === 'kokoro',
      ),
    );
    assert.ok(done.files?.transcript);
    const transcript = await readFile(done.files.transcript, 'utf8');
    assert.match(transcript, /NOTE[^\n]*\n?[^\n]*af_heart/, 'the transcript does not say who read it');

    // Asked once: the second job goes without a question.
    const shown = api.notifier.shown.length;
    const again = await convert('Read Again', undefined);
    assert.ok(again, `no second job: ${JSON.stringify(api.notifier.shown.at(-1))}`);
    assert.equal(
      api.notifier.shown.slice(shown).filter((n) => n.actions.some((a) => a.startsWith('Send to '))).length,
      0,
    );
    await waitForEnd(api, again.id, 180_000);

    // The key: in the engine's environment only.
    const pid = await waitFor('the engine this window started', () => api.engine.pid);
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    assert.match(commandLine, /--voices/);
    assert.ok(!commandLine.includes(KEY), 'the key is on the engine command line');
    const voicesFile = path.join(api.storageUri.fsPath, 'engine', 'voices.json');
    const file = readFileSync(voicesFile, 'utf8');
    assert.match(file, /"key_env": "ARTICLE_AUDIO_VOICE_KEY"/);
    assert.ok(!file.includes(KEY), 'the key is in the voices file');
    const config = JSON.stringify(vscode.workspace.getConfiguration('articleAudio'));
    assert.ok(!config.includes(KEY), 'the key is in the settings');
    assert.ok(!api.log.linesOf('').some((line) => line.includes(KEY)), 'the key is in the log');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('a provider that refuses fails the job voice_unavailable, with a fix that retries with the built-in voices', async () => {
    provider.fault = () => ({
      kind: 'status',
      status: 401,
      body: '{"error":{"message":"Incorrect API key provided"}}',
    });
    const job = await convert('Refused By The Provider', undefined);
    assert.ok(job, `no job: ${JSON.stringify(api.notifier.shown.at(-1))}`);
    const failed = await waitForEnd(api, job.id, 180_000);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error?.code, 'voice_unavailable', JSON.stringify(failed.error));
    const notice = await waitFor('the failure notice', () =>
      api.notifier.shown.find((n) => n.message.includes('Refused By The Provider') && n.fixes),
    );
    assert.ok(!notice.message.includes(KEY), 'the key is in the notice');
    const fix = notice.fixes?.find((f) => f.title === 'Use Built-in Voices and Retry');
    assert.ok(fix, `fixes: ${notice.actions.join(', ')}`);
    const asked = provider.requests.length;
    provider.fault = undefined;
    const again = (await fix.run()) as JobRecord | undefined;
    assert.ok(again, 'the fix made no job');
    const done = await waitForEnd(api, again.id, 180_000);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    assert.equal(provider.requests.length, asked, 'the built-in voices asked the provider');
    assert.equal(vscode.workspace.getConfiguration('articleAudio.voice').get('provider'), 'builtin');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
