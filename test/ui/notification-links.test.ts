// Hostile text in notifications (issue 12, item 1): VS Code renders `[label](command:id?args)` in a notification's
// message as a link that runs the command. A page's <title> and a redirect target quoted in an error are outside
// text; they must reach the notification with no link in it. Checked in the DOM of real VS Code's notification toasts.
import * as assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Locator } from 'playwright-core';
import { launchVSCode, type VSCodeSession, waitFor } from '../support/vscode-ui';

// Would type `echo pwned` and Enter into the open terminal, if the link were there and clicked.
const COMMAND_LINK =
  '[Details](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22echo%20pwned%5Cn%22%7D)';

const TITLE_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tides ${COMMAND_LINK} of the North Sea</title></head>
<body><main><article>
<p>Twice a day the sea leaves the flats and comes back again. Walkers cross to the islands at low water, guided by
people who know the channels and the hours of the tide better than any map.</p>
<p>The flats are full of life. Worms, snails and crabs feed the birds that stop here on their way between the Arctic
and Africa, and seals rest on the sandbanks when the water is low.</p>
<p>Storms change the channels every winter, so the guides walk the routes again each spring before they take anyone
across.</p>
</article></main></body></html>`;

describe('Notifications carry no links from outside text (UI)', () => {
  let vscode: VSCodeSession;
  let server: http.Server;
  let base: string;

  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { location: `http://127.0.0.1:1/${COMMAND_LINK}` }).end();
      } else if (req.url === '/tides') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(TITLE_PAGE);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    vscode = await launchVSCode({
      settings: { 'articleAudio.model': 'article-audio-1-mini', 'articleAudio.openPlayerWhenDone': false },
    });
  });

  after(async () => {
    await vscode?.close();
    server?.close();
  });

  async function convertUrl(url: string): Promise<void> {
    await vscode.runCommand('Article Audio: Convert URL to Audio…');
    // The URL box, not the palette's input (the same element, hidden, until the extension has activated).
    const input = vscode.page.locator('.quick-input-widget input[placeholder="https://example.com/blog/post"]');
    await input.waitFor({ timeout: 60_000 }).catch(async (error: unknown) => {
      throw new Error(`The URL box did not open (${await vscode.screenshot('notification-no-url-box')})`, {
        cause: error,
      });
    });
    await input.fill(url);
    await input.press('Enter');
  }

  /** Every link in the toast's message (its buttons are anchors too): VS Code renders them as `a.monaco-link`. */
  async function links(toast: Locator): Promise<string[]> {
    const anchors = toast.locator('.notification-list-item-message a');
    const found: string[] = [];
    for (let i = 0; i < (await anchors.count()); i++) {
      const anchor = anchors.nth(i);
      found.push(`${(await anchor.textContent()) ?? ''} -> ${(await anchor.getAttribute('href')) ?? ''}`);
    }
    return found;
  }

  it('a redirect to an address holding a command link: the fetch_failed warning shows the address as text, no link', async () => {
    await convertUrl(`${base}/moved`);
    const toast = vscode.page.locator('.notification-toast', { hasText: 'fetch_failed' }).first();
    await toast.waitFor({ timeout: 120_000 });
    await vscode.screenshot('notification-redirect');
    const message = await toast.locator('.notification-list-item-message').innerText();
    assert.match(message, /Details/, `the warning does not quote the address: ${message}`);
    assert.deepEqual(await links(toast), [], `the warning has links: ${message}`);
  });

  it('a page whose <title> holds a command link: "… is ready to play." shows the title as text, no link', async () => {
    await convertUrl(`${base}/tides`);
    const toast = vscode.page.locator('.notification-toast', { hasText: 'is ready to play.' }).first();
    await toast.waitFor({ timeout: 180_000 });
    await vscode.screenshot('notification-title');
    const message = await toast.locator('.notification-list-item-message').innerText();
    assert.match(message, /Tides/, `the notification does not name the job: ${message}`);
    assert.deepEqual(await links(toast), [], `the notification has links: ${message}`);
    await waitFor(
      'no command link anywhere in the notifications',
      async () => (await vscode.page.locator('.notifications-toasts a[href^="command:"]').count()) === 0,
      2_000,
    );
  });
});
