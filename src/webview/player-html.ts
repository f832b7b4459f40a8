// The player page's HTML: a fixed skeleton that media/player/main.ts fills in. Job data never goes into this string
// (it arrives by message and is set with textContent), so nothing here needs escaping except the URIs.
// No vscode import, so the CSP can be unit-tested in plain Node.

export const PLAYER_DOCUMENT_TITLE = 'Article Audio Player';

export interface PlayerPageResources {
  /** webview.cspSource */
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
  /** The extension's icon, shown by the OS media controls (navigator.mediaSession artwork). */
  artworkUri?: string;
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource}`,
    // blob: for the MediaSource that plays a running job's parts (bytes from the extension, never the network).
    `media-src ${cspSource} blob:`,
    `style-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    "connect-src 'none'",
  ].join('; ');
}

function attribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

// Icons are inline SVG (markup, not a loaded resource), drawn with currentColor so they follow the theme.
const icon = (body: string) =>
  `<svg class="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">${body}</svg>`;
const ICONS = {
  play: icon('<path fill="currentColor" d="M4.5 2.6v10.8L13 8z"/>'),
  pause: icon('<path fill="currentColor" d="M4 2.5h3v11H4zM9 2.5h3v11H9z"/>'),
  back: icon(
    '<path fill="none" stroke="currentColor" stroke-width="1.3" d="M3.3 6.2A5 5 0 1 1 3 9"/><path fill="currentColor" d="M2.2 2.8v4.4h4.4z"/>',
  ),
  forward: icon(
    '<path fill="none" stroke="currentColor" stroke-width="1.3" d="M12.7 6.2A5 5 0 1 0 13 9"/><path fill="currentColor" d="M13.8 2.8v4.4H9.4z"/>',
  ),
  volume: icon(
    '<path fill="currentColor" d="M2 6h2.5L8 3v10L4.5 10H2z"/><path class="icon-waves" fill="none" stroke="currentColor" stroke-width="1.2" d="M10.2 5.6a3 3 0 0 1 0 4.8M12 3.8a5.5 5.5 0 0 1 0 8.4"/><path class="icon-muted" fill="none" stroke="currentColor" stroke-width="1.3" d="M10 5.5l4 5m0-5l-4 5"/>',
  ),
  save: icon('<path fill="currentColor" d="M3 2h8.4L14 4.6V14H2V2zm1 1v3h6V3zm-1 6v4h10V9z"/>'),
  source: icon('<path fill="currentColor" d="M4 1h5.4L13 4.6V15H3V1zm1 1v12h7V5.2H8.8V2zm4.8.4v1.8h1.8z"/>'),
};

export function renderPlayerHtml(resources: PlayerPageResources): string {
  const { cspSource, nonce, scriptUri, styleUri, artworkUri } = resources;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attribute(contentSecurityPolicy(cspSource, nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attribute(styleUri)}">
<title>${PLAYER_DOCUMENT_TITLE}</title>
</head>
<body${artworkUri ? ` data-artwork="${attribute(artworkUri)}"` : ''}>
<div id="player" class="player" hidden>
  <header class="header">
    <div class="heading">
      <h1 id="job-title" class="title"></h1>
      <p id="job-meta" class="meta"></p>
    </div>
    <div class="actions">
      <button type="button" id="open-source" class="secondary" hidden title="Open the document this audio was made from">${ICONS.source}<span>Open Source</span></button>
      <button type="button" id="save-as" class="secondary" title="Save the MP3 and its transcript">${ICONS.save}<span>Save As…</span></button>
    </div>
  </header>
  <section class="transport" aria-label="Playback">
    <div class="transport-row">
      <button type="button" id="play" class="play" aria-label="Play" title="Play (Space or K)">${ICONS.play.replace('class="icon"', 'class="icon icon-play"')}${ICONS.pause.replace('class="icon"', 'class="icon icon-pause"')}</button>
      <button type="button" id="back" class="icon-button" aria-label="Back 15 seconds" title="Back 15 seconds (J or ←)">${ICONS.back}<span class="skip-label" aria-hidden="true">15</span></button>
      <button type="button" id="forward" class="icon-button" aria-label="Forward 15 seconds" title="Forward 15 seconds (L or →)">${ICONS.forward}<span class="skip-label" aria-hidden="true">15</span></button>
      <span id="time-current" class="time" aria-hidden="true">0:00</span>
      <input type="range" id="seek" class="seek" min="0" max="0" step="0.1" value="0" aria-label="Position">
      <span id="time-total" class="time" aria-hidden="true">0:00</span>
    </div>
    <div class="transport-row secondary-row">
      <label class="speed" for="rate">Speed
        <select id="rate" title="Playback speed ([ slower, ] faster)"></select>
      </label>
      <div class="sleep">
        <label for="sleep">Sleep</label>
        <select id="sleep" title="Sleep timer: pause at the end of the article or after some minutes of listening"></select>
        <input type="number" id="sleep-minutes" min="1" step="1" inputmode="numeric" placeholder="min" aria-label="Sleep timer minutes (Enter to start)" hidden>
        <span id="sleep-left" class="sleep-left" hidden></span>
      </div>
      <div class="volume">
        <button type="button" id="mute" class="icon-button" aria-label="Mute" aria-pressed="false" title="Mute (M)">${ICONS.volume}</button>
        <input type="range" id="volume" min="0" max="1" step="0.05" value="1" aria-label="Volume">
      </div>
      <p id="shortcuts" class="shortcuts"><kbd>Space</kbd>/<kbd>K</kbd> play · <kbd>J</kbd>/<kbd>L</kbd> or <kbd>←</kbd>/<kbd>→</kbd> 15&nbsp;s · <kbd>[</kbd>/<kbd>]</kbd> speed · <kbd>↑</kbd>/<kbd>↓</kbd> sentence · <kbd>M</kbd> mute · click a sentence (or <kbd>Tab</kbd> to it, <kbd>Enter</kbd>) to jump</p>
    </div>
    <p id="playback-error" class="error" role="alert" hidden></p>
  </section>
  <section id="up-next" class="up-next" aria-labelledby="up-next-heading" hidden>
    <h2 id="up-next-heading">Up next</h2>
    <ol id="up-next-list"></ol>
  </section>
  <div class="content">
    <nav id="chapters" class="chapters" aria-labelledby="chapters-heading" hidden>
      <h2 id="chapters-heading">Chapters</h2>
      <ol id="chapter-list"></ol>
    </nav>
    <section id="transcript" class="transcript" aria-labelledby="transcript-heading" tabindex="-1">
      <h2 id="transcript-heading" class="visually-hidden">Transcript</h2>
      <p id="transcript-note" class="note" hidden></p>
      <div id="cues" class="cues"></div>
    </section>
  </div>
  <audio id="audio" preload="metadata"></audio>
</div>
<section id="unavailable" class="unavailable" hidden aria-labelledby="unavailable-title">
  <h1 id="unavailable-title" class="title"></h1>
  <p id="unavailable-reason"></p>
  <div id="unavailable-actions" class="actions"></div>
</section>
<p id="loading" class="note">Loading…</p>
<p id="announcer" class="visually-hidden" role="status" aria-live="polite"></p>
<script nonce="${attribute(nonce)}" src="${attribute(scriptUri)}"></script>
</body>
</html>`;
}
