// Show Jobs, Show Log, and the walkthrough's Open Sample Article.
import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import { Views } from '../command-ids';
import type { CommandContext } from './context';

export const showJobs = (ctx: CommandContext) => async (): Promise<void> => {
  ctx.statusBar.acknowledge();
  await vscode.commands.executeCommand(`${Views.jobs}.focus`);
};

export const showLog = (ctx: CommandContext) => (): void => ctx.channel.show(true);

/** A short sample article to try the extension on, opened as an untitled Markdown document (the file stays as is). */
export const openSample = (ctx: CommandContext) => async (): Promise<void> => {
  const sample = vscode.Uri.joinPath(ctx.extension.extensionUri, 'media', 'walkthrough', 'sample.md');
  const content = await readFile(sample.fsPath, 'utf8');
  const document = await vscode.workspace.openTextDocument({ language: 'markdown', content });
  const editor = await vscode.window.showTextDocument(document);
  // The second paragraph, selected, ready for Ctrl+Alt+A.
  const start = content.indexOf('Select a few');
  if (start >= 0) {
    const end = content.indexOf('\n\n', start);
    editor.selection = new vscode.Selection(
      document.positionAt(start),
      document.positionAt(end < 0 ? content.length : end),
    );
  }
};
