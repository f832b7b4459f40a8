// The player page's HTML: the strict CSP the issue asks for, the nonce on the one script, and nothing inline.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PLAYER_DOCUMENT_TITLE, contentSecurityPolicy, renderPlayerHtml } from '../../../src/webview/player-html';
import { fileNameFor, transcriptPathFor } from '../../../src/webview/save-names';

const cspSource = 'https://*.vscode-cdn.net';
const nonce = 'q83v+abc/DEF==';
const html = renderPlayerHtml({
  cspSource,
  nonce,
  scriptUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/media/build/player.js',
  styleUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/media/player.css',
});

describe('player: page HTML', () => {
  it('has a strict content security policy', () => {
    const csp = contentSecurityPolicy(cspSource, nonce);
    assert.equal(
      csp,
      `default-src 'none'; img-src ${cspSource}; media-src ${cspSource} blob:; style-src ${cspSource}; script-src 'nonce-${nonce}'; font-src ${cspSource}; connect-src 'none'`,
    );
    assert.ok(!/unsafe-(inline|eval)/.test(csp));
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html);
    assert.equal(meta?.[1]?.replace(/&amp;/g, '&'), csp);
  });

  it('loads exactly one script, with the nonce, and no inline script, style or handler', () => {
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 1);
    assert.match(scripts[0]?.[1] ?? '', new RegExp(`nonce="${nonce.replace(/[+/]/g, '\\$&')}"`));
    assert.match(scripts[0]?.[1] ?? '', /src="https:\/\/file\+\.vscode-resource[^"]+player\.js"/);
    assert.equal(scripts[0]?.[2]?.trim(), '');
    assert.ok(!/<style\b/.test(html), 'no <style> element');
    assert.ok(!/\sstyle="/.test(html), 'no style attribute');
    assert.ok(!/\son[a-z]+="/i.test(html), 'no inline event handler');
    assert.ok(!/(src|href)="(https?:)?\/\/(?!file\+\.vscode-resource)/.test(html), 'no remote resource');
    assert.match(html, /<link rel="stylesheet" href="[^"]+media\/player\.css">/);
  });

  it('has the stable document title tests look for, and labelled controls', () => {
    assert.match(html, new RegExp(`<title>${PLAYER_DOCUMENT_TITLE}</title>`));
    for (const id of ['play', 'back', 'forward', 'mute'])
      assert.match(html, new RegExp(`id="${id}"[^>]*aria-label="[^"]+"`));
    for (const id of ['seek', 'volume']) assert.match(html, new RegExp(`id="${id}"[^>]*aria-label="[^"]+"`));
    assert.match(html, /<label class="speed" for="rate">/);
    assert.match(html, /<label for="sleep">Sleep<\/label>/);
    assert.match(html, /id="sleep-minutes"[^>]*aria-label="[^"]+"/);
  });

  it('hands the page the artwork for the OS media controls as an escaped attribute, from the webview only', () => {
    const withArtwork = renderPlayerHtml({
      cspSource,
      nonce,
      scriptUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/media/build/player.js',
      styleUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/media/player.css',
      artworkUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/media/icon.png?a="b"&c',
    });
    assert.match(
      withArtwork,
      /<body data-artwork="https:\/\/file\+\.vscode-resource\.vscode-cdn\.net\/ext\/media\/icon\.png\?a=&quot;b&quot;&amp;c">/,
    );
    assert.match(html, /<body>/, 'no attribute without artwork');
  });
});

describe('player: save names', () => {
  it('turns titles into file names every OS accepts', () => {
    assert.equal(fileNameFor('Why: Bees / Wasps? <2024>'), 'Why Bees Wasps 2024');
    assert.equal(fileNameFor('...hidden'), 'hidden');
    assert.equal(fileNameFor('  \u0000 '), 'article-audio');
    assert.equal(fileNameFor('x'.repeat(300)).length, 80);
  });

  it('puts the transcript beside the audio', () => {
    assert.equal(transcriptPathFor('/home/me/Bees.mp3'), '/home/me/Bees.vtt');
    assert.equal(transcriptPathFor('/c:/Users/me/Bees.MP3'), '/c:/Users/me/Bees.vtt');
    assert.equal(transcriptPathFor('/home/me/no-extension'), '/home/me/no-extension.vtt');
  });
});
