// Composition root (placeholder until the extension issue lands): registers every contributed command.
import * as vscode from 'vscode';
import { Commands, Views } from './command-ids';

export function activate(context: vscode.ExtensionContext): void {
  for (const id of Object.values(Commands).filter((c) => c !== Commands.showJobs)) {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, () => vscode.window.showInformationMessage(`Article Audio: ${id} is not built yet.`)),
    );
  }
  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.showJobs, () => vscode.commands.executeCommand(`workbench.view.extension.${Views.container}`)),
    vscode.window.registerTreeDataProvider(Views.jobs, { getTreeItem: (item: vscode.TreeItem) => item, getChildren: () => [] }),
  );
}

export function deactivate(): void {}
