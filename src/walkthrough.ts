// The Get Started walkthrough's own command: a short sample article to try the extension on, opened as an
// untitled Markdown document (the bundled file stays untouched).
import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import { Commands } from './command-ids';

export function registerWalkthrough(context: vscode.ExtensionContext): vscode.Disposable {
  return vscode.commands.registerCommand(Commands.openSample, async () => {
    const sample = vscode.Uri.joinPath(context.extensionUri, 'media', 'walkthrough', 'sample.md');
    const content = await readFile(sample.fsPath, 'utf8');
    const document = await vscode.workspace.openTextDocument({ language: 'markdown', content });
    const editor = await vscode.window.showTextDocument(document);
    // The second paragraph, selected, ready for Ctrl+Alt+A.
    const start = content.indexOf('Select a few');
    if (start >= 0) {
      const end = content.indexOf('\n\n', start);
      editor.selection = new vscode.Selection(document.positionAt(start), document.positionAt(end < 0 ? content.length : end));
    }
  });
}
