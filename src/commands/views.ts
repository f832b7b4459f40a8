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

/** The scheme of the sample article: a read-only document served from the extension, so it never asks to be saved. */
export const SAMPLE_SCHEME = 'article-audio-sample';
const SAMPLE_URI = vscode.Uri.from({ scheme: SAMPLE_SCHEME, path: '/Sample Article.md' });

/** Serves the sample article (media/walkthrough/sample.md) under SAMPLE_SCHEME. */
export function registerSample(extensionUri: vscode.Uri): vscode.Disposable {
  const file = vscode.Uri.joinPath(extensionUri, 'media', 'walkthrough', 'sample.md');
  return vscode.workspace.registerTextDocumentContentProvider(SAMPLE_SCHEME, {
    provideTextDocumentContent: () => readFile(file.fsPath, 'utf8'),
  });
}

/**
 * A short sample article to try the extension on, opened read-only (a document of its own scheme: closing it asks
 * nothing, and the file in the extension stays as it is), with a paragraph selected, ready for Ctrl+Alt+A.
 */
export const openSample = () => async (): Promise<void> => {
  const document = await vscode.workspace.openTextDocument(SAMPLE_URI);
  const editor = await vscode.window.showTextDocument(document);
  const content = document.getText();
  const start = content.indexOf('Select a few');
  if (start >= 0) {
    const end = content.indexOf('\n\n', start);
    editor.selection = new vscode.Selection(
      document.positionAt(start),
      document.positionAt(end < 0 ? content.length : end),
    );
  }
};
