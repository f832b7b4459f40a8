import * as assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import { Commands } from '../../../src/command-ids';

const EXTENSION_ID = 'article-audio.article-audio';

interface Contributes {
  commands: { command: string }[];
}

describe('Activation', () => {
  it('activates and registers every contributed command', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `extension ${EXTENSION_ID} is not installed in this VS Code`);
    await extension.activate();
    assert.equal(extension.isActive, true);
    const contributed = (extension.packageJSON as { contributes: Contributes }).contributes.commands.map(
      (c) => c.command,
    );
    assert.ok(
      contributed.length >= Object.keys(Commands).length,
      'package.json contributes fewer commands than the code table',
    );
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = contributed.filter((id) => !registered.has(id));
    assert.deepEqual(missing, [], `contributed but not registered: ${missing.join(', ')}`);
  });
});
