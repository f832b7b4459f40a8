import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchVSCode, type VSCodeSession } from '../support/vscode-ui';

describe('Command palette (UI)', () => {
  let vscode: VSCodeSession;
  before(async () => {
    vscode = await launchVSCode();
  });
  after(async () => {
    await vscode?.close();
  });

  it('lists our commands and "Show Jobs" opens the Jobs view', async () => {
    const { page } = vscode;
    await vscode.runCommand('Article Audio: Show Jobs');
    // With no jobs yet, the view shows its welcome content with the three ways to start.
    const welcome = page.locator('.part.sidebar .welcome-view-content');
    await welcome.waitFor({ timeout: 20_000 });
    assert.match(await welcome.innerText(), /Convert Current Document/);
    const sidebarTitle = await page.locator('.part.sidebar .title-label').first().innerText();
    assert.match(sidebarTitle, /article audio/i);
  });
});
