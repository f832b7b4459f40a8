// Set API Key (checked against the service before it is kept) and Clear API Key. A key belongs to one service
// address, so with the local engine in use Set API Key asks for the remote address first.
import * as vscode from 'vscode';
import { Commands } from '../command-ids';
import { checkApiKey } from '../connection/api-key';
import { providerHost, readVoiceSettings } from '../connection/voice-settings';
import { Fixes } from '../notify';
import type { CommandContext } from './context';

/** Resolves true when a key was saved (accepted by the service, or not checkable and kept anyway). */
export const setApiKey =
  (ctx: CommandContext) =>
  async (given?: string): Promise<boolean> => {
    const service = ctx.connection.current();
    if (service === 'local') {
      if (typeof given === 'string') {
        ctx.notifier.warn('Choose the remote service first: an API key is kept for one service address.', [
          Fixes.useRemote,
        ]);
        return false;
      }
      return (await vscode.commands.executeCommand<boolean>(Commands.useRemoteService)) === true;
    }
    const where = ctx.connection.describe(service);
    const key =
      typeof given === 'string'
        ? given
        : await vscode.window.showInputBox({
            title: 'Article Audio: API Key',
            prompt: `API key for ${where} (kept in the OS keyring, never in settings, sent only to this address)`,
            password: true,
            ignoreFocusOut: true,
            placeHolder: 'Paste the key',
            validateInput: checkApiKey,
          });
    if (key === undefined) return false;
    const problem = checkApiKey(key);
    if (problem) {
      ctx.notifier.warn(problem, [Fixes.setKey]);
      return false;
    }
    ctx.extensionLog.redactor.add(key);
    let verdict: 'accepted' | 'refused' | 'unchecked';
    let reason = '';
    try {
      verdict = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `Article Audio: checking the key with ${where}…` },
        () => ctx.connection.checkKey(service, key.trim()),
      );
    } catch (error) {
      verdict = 'unchecked';
      reason = error instanceof Error ? error.message : String(error);
    }
    if (verdict === 'refused') {
      ctx.log.warn(`${where} refused the API key that was entered; it was not saved`);
      ctx.notifier.warn(`${where} refused this key; it was not saved.`, [Fixes.setKey]);
      return false;
    }
    try {
      await ctx.keys.set(service, key);
    } catch (error) {
      ctx.notifier.error('The API key was not saved', error);
      return false;
    }
    ctx.log.info(`API key for ${where} saved in SecretStorage (${verdict})`);
    if (verdict === 'accepted') ctx.notifier.info(`Key accepted by ${where} and saved.`);
    else ctx.notifier.warn(`API key saved for ${where}, but it could not be checked: ${reason}`, [Fixes.showLog]);
    return true;
  };

export const clearApiKey = (ctx: CommandContext) => async (): Promise<void> => {
  const service = ctx.connection.current();
  if (service === 'local') {
    ctx.notifier.info(
      'Article Audio uses the local engine, which needs no API key. Keys of remote services are removed while that service is chosen.',
    );
    return;
  }
  try {
    await ctx.keys.clear(service);
  } catch (error) {
    ctx.notifier.error('The API key was not removed', error);
    return;
  }
  ctx.log.info(`API key for ${ctx.connection.describe(service)} removed from SecretStorage`);
  ctx.notifier.info(`API key for ${ctx.connection.describe(service)} removed from the OS keyring.`);
};

/**
 * Set Voice Provider Key…: the key of the speech provider the articleAudio.voice settings name, kept in the OS keyring
 * for that provider's address (never in settings). The local engine is started again with it (in its environment
 * only); a later change of the address never receives it.
 */
export const setVoiceKey =
  (ctx: CommandContext) =>
  async (given?: string): Promise<boolean> => {
    const voice = readVoiceSettings();
    if (voice.provider === 'builtin') {
      ctx.notifier.warn(
        'The built-in voices need no key. To read with a speech provider, set articleAudio.voice.provider to "openai" (an OpenAI-compatible speech API) and its address first.',
        [
          {
            title: 'Open Voice Settings',
            run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'articleAudio.voice'),
          },
        ],
      );
      return false;
    }
    const host = providerHost(voice);
    const key =
      typeof given === 'string'
        ? given
        : await vscode.window.showInputBox({
            title: 'Article Audio: Voice Provider Key',
            prompt: `Key for the speech provider at ${host} (kept in the OS keyring, never in settings, sent only to this address)`,
            password: true,
            ignoreFocusOut: true,
            placeHolder: 'Paste the key',
            validateInput: checkApiKey,
          });
    if (key === undefined) return false;
    const problem = checkApiKey(key);
    if (problem) {
      ctx.notifier.warn(problem);
      return false;
    }
    ctx.extensionLog.redactor.add(key);
    try {
      await ctx.keys.set(voice.baseUrl, key);
    } catch (error) {
      ctx.notifier.error('The voice provider key was not saved', error);
      return false;
    }
    ctx.log.info(`voice provider key for ${host} saved in SecretStorage`);
    ctx.notifier.info(`Key for ${host} saved. The next job read by ${host} uses it.`);
    return true;
  };

export const clearVoiceKey = (ctx: CommandContext) => async (): Promise<void> => {
  const voice = readVoiceSettings();
  const host = providerHost(voice);
  try {
    await ctx.keys.clear(voice.baseUrl);
  } catch (error) {
    ctx.notifier.error('The voice provider key was not removed', error);
    return;
  }
  ctx.log.info(`voice provider key for ${host} removed from SecretStorage`);
  ctx.notifier.info(`Key for the speech provider at ${host} removed from the OS keyring.`);
};
