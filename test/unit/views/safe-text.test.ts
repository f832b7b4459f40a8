// The neutralizers for outside text (src/views/safe-text.ts) against hostile strings: no link survives in a
// notification (checked with VS Code's own link pattern) or in a Markdown tooltip (checked by rendering with marked,
// a CommonMark + GFM renderer like the one VS Code uses), and ordinary text stays readable.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { marked } from 'marked';
import {
  commandLink,
  escapeMarkdown,
  MAX_MESSAGE_LENGTH,
  plainLabel,
  plainMessage,
} from '../../../src/views/safe-text';

// VS Code 1.100's parseLinkedText (src/vs/base/common/linkedText.ts), which notifications use to find links.
const VSCODE_NOTIFICATION_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;

const HOSTILE = [
  '[Details](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22echo%20pwned%5Cn%22%7D)',
  'http://127.0.0.1:1/[Details](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22id%22%7D)',
  '[Open](https://evil.example/phish)',
  '[file](file:///etc/passwd)',
  '[x]  (command:foo)',
  '[a](COMMAND:workbench.action.reloadWindow)',
  '\\[Escaped\\](command:articleAudio.removeJob?%5B%22x%22%5D)',
  '[nested [brackets]](command:x)',
  '<a href="command:x">html</a> <img src=x onerror=alert(1)>',
  '<command:workbench.action.reloadWindow> and https://evil.example/autolink and www.evil.example',
  '![image](https://evil.example/track.png)',
  '[ref]: command:workbench.action.reloadWindow\n\n[ref]',
  '$(loading~spin) spoofed icon',
  'right-to-left \u202eevil.exe\u202c override',
];

function notificationLinks(text: string): string[] {
  return [...text.matchAll(VSCODE_NOTIFICATION_LINK)].map((m) => m[0]);
}

describe('plainMessage (notifications)', () => {
  it('the hostile strings are links in VS Code notifications as they are', () => {
    // So that the checks below cannot pass by a pattern that never matches.
    assert.ok(notificationLinks(HOSTILE[0] ?? '').length === 1);
    assert.ok(notificationLinks(HOSTILE[1] ?? '').length === 1);
  });

  for (const hostile of HOSTILE) {
    it(`leaves no link in ${JSON.stringify(hostile.slice(0, 50))}`, () => {
      const safe = plainMessage(hostile);
      assert.deepEqual(notificationLinks(safe), []);
      assert.deepEqual(notificationLinks(`"${safe}" is ready to play.`), []);
      assert.ok(!/command:/i.test(safe), `a command: scheme is left: ${safe}`);
      assert.ok(!/[\u202a-\u202e]/.test(safe));
    });
  }

  it('no link forms when neutralized pieces are joined', () => {
    const joined = plainMessage('Title [Details') + plainMessage('](command:workbench.action.reloadWindow)');
    assert.deepEqual(notificationLinks(joined), []);
    const around = `${plainMessage('[Details]')}${plainMessage('(command:workbench.action.reloadWindow)')}`;
    assert.deepEqual(notificationLinks(around), []);
  });

  it('keeps ordinary messages as written', () => {
    for (const text of [
      '"The Lighthouse Keeper" is ready to play.',
      'Could not fetch http://127.0.0.1:1/page: connect ECONNREFUSED.',
      'Missing or wrong API token: send `Authorization: Bearer <token>`.',
      'Selection (lines 3-9) has 18 characters; an article needs at least 50.',
    ]) {
      assert.equal(plainMessage(text), text);
    }
  });

  it('caps a huge message', () => {
    const safe = plainMessage('x'.repeat(5_000_000));
    assert.equal(safe.length, MAX_MESSAGE_LENGTH);
  });
});

describe('escapeMarkdown (tooltips)', () => {
  for (const hostile of HOSTILE) {
    it(`renders ${JSON.stringify(hostile.slice(0, 50))} as text only`, () => {
      const html = marked.parse(`**Title:** ${escapeMarkdown(hostile)}`, { async: false, gfm: true });
      assert.ok(!/<(a|img|script|h\d|ul|ol|pre|code|blockquote)\b/i.test(html), `HTML from ${hostile}: ${html}`);
      assert.ok(!/<[a-z]+[^>]*\shref=/i.test(html), html);
      assert.ok(!/\$\(/.test(html), `an icon survived: ${html}`);
    });
  }

  it('the text reads as written', () => {
    const html = marked.parse(escapeMarkdown('Rivers & Towns (part 1) #2: 50% of *all* [notes]'), { async: false });
    assert.equal(html.trim(), '<p>Rivers &amp; Towns (part 1) #2: 50% of *all* [notes]</p>');
  });
});

describe('plainLabel and commandLink', () => {
  it('breaks icon syntax in labels', () => {
    assert.ok(!plainLabel('$(loading~spin) x').includes('$('));
  });

  it('an argument from outside cannot close a command link', () => {
    const link = commandLink('Cancel', 'articleAudio.cancelJob', [
      'x)[Play](command:articleAudio.removeJob?%5B%22y%22%5D',
    ]);
    const html = marked.parse(link, { async: false });
    assert.equal((html.match(/<a /g) ?? []).length, 1, html);
    assert.match(html, /href="command:articleAudio\.cancelJob\?/);
    assert.ok(!html.includes('removeJob'.replace('J', '"J')));
    const href = /href="([^"]+)"/.exec(html)?.[1] ?? '';
    assert.deepEqual(JSON.parse(decodeURIComponent(href.slice(href.indexOf('?') + 1))), [
      'x)[Play](command:articleAudio.removeJob?%5B%22y%22%5D',
    ]);
  });
});
