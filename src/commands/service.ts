// Use Local Engine and Use Remote Service: which job service new jobs go to.
import * as vscode from 'vscode';
import { Commands } from '../command-ids';
import { isHttpUrl, readSettings, updateBaseUrl } from '../config';
import type { CommandContext } from './context';

export const useLocalEngine = (ctx: CommandContext) => async (): Promise<void> => {
  await updateBaseUrl('');
  ctx.notifier.info('Article Audio now uses the local engine on this computer. No account needed.');
};

/** Resolves true when the remote service has a key (kept before, or set now). */
export const useRemoteService =
  (ctx: CommandContext) =>
  async (given?: string): Promise<boolean> => {
    const current = readSettings().baseUrl ?? '';
    const url =
      typeof given === 'string'
        ? given
        : await vscode.window.showInputBox({
            title: 'Article Audio: Remote Service',
            prompt: 'Base address of a job service that follows the Article Audio API',
            value: current || 'https://',
            ignoreFocusOut: true,
            validateInput: (value) =>
              isHttpUrl(value.trim())
                ? undefined
                : 'Enter an http:// or https:// address, such as https://audio.example.com',
          });
    if (url === undefined) return false;
    if (!isHttpUrl(url.trim())) {
      ctx.notifier.warn(`"${url}" is not an http:// or https:// address.`);
      return false;
    }
    const baseUrl = url.trim().replace(/\/+$/, '');
    await updateBaseUrl(baseUrl);
    let hasKey = (await ctx.keys.get(baseUrl).catch(() => undefined)) !== undefined;
    // (current() is checked so that Set API Key, which asks for an address first when local, can never loop.)
    if (!hasKey && typeof given !== 'string' && ctx.connection.current() !== 'local')
      hasKey = (await vscode.commands.executeCommand<boolean>(Commands.setApiKey)) === true;
    ctx.notifier.info(`Article Audio now uses ${ctx.connection.describe()}.`);
    return hasKey;
  };
