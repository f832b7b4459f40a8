// The OS media controls and media keys: navigator.mediaSession gets the article's title and the player's handlers
// (play, pause, seek, next in the listening queue, previous sentence, stop), and the media keys that reach the page
// as key events do the same. Where a browser or webview has no mediaSession, or lacks an action, this does nothing.
import { type MediaKeyAction, mediaKeyAction, positionState } from '../../src/webview/player-controls';
import { SKIP_SECONDS } from '../../src/webview/protocol';

export interface MediaControls {
  play(): void;
  pause(): void;
  togglePlay(): void;
  stop(): void;
  /** Seconds, negative for back. */
  skip(seconds: number): void;
  seekTo(seconds: number): void;
  next(): void;
  previous(): void;
}

const session: MediaSession | undefined = 'mediaSession' in navigator ? navigator.mediaSession : undefined;

function handle(action: MediaSessionAction, handler: MediaSessionActionHandler | null): void {
  try {
    session?.setActionHandler(action, handler);
  } catch {
    // An action this browser does not know (it throws instead of ignoring it).
  }
}

let nextAvailable = false;
let controls: MediaControls | undefined;

/** Registers the handlers once; `controls` is what they do. */
export function setUpMediaSession(player: MediaControls): void {
  controls = player;
  handle('play', () => player.play());
  handle('pause', () => player.pause());
  handle('stop', () => player.stop());
  handle('seekbackward', (details) => player.skip(-(details.seekOffset || SKIP_SECONDS)));
  handle('seekforward', (details) => player.skip(details.seekOffset || SKIP_SECONDS));
  handle('seekto', (details) => {
    if (details.seekTime !== undefined && Number.isFinite(details.seekTime)) player.seekTo(details.seekTime);
  });
  handle('previoustrack', () => player.previous());
  setNextAvailable(nextAvailable);
}

/** "Next" is offered only while the listening queue has something (the OS hides the button otherwise). */
export function setNextAvailable(available: boolean): void {
  nextAvailable = available;
  const player = controls;
  handle('nexttrack', available && player ? () => player.next() : null);
}

/** The article now in the player: its title, "Article Audio", and the extension's icon. */
export function showMediaMetadata(title: string, artworkUrl: string | undefined): void {
  if (!session || typeof MediaMetadata === 'undefined') return;
  session.metadata = new MediaMetadata({
    title,
    artist: 'Article Audio',
    ...(artworkUrl ? { artwork: [{ src: artworkUrl, sizes: '256x256', type: 'image/png' }] } : {}),
  });
}

export function showMediaState(audio: HTMLAudioElement): void {
  if (!session) return;
  session.playbackState = audio.paused ? 'paused' : 'playing';
  const state = positionState(audio.duration, audio.currentTime, audio.playbackRate);
  try {
    // No position for a stream whose length is not known yet (a running job's parts): the OS shows none.
    session.setPositionState(state);
  } catch {
    // setPositionState is missing in older engines.
  }
}

export function clearMediaSession(): void {
  if (!session) return;
  session.metadata = null;
  session.playbackState = 'none';
  try {
    session.setPositionState();
  } catch {
    // As above.
  }
}

/** A media key that reached the page as a key event: what it asks for, done; false for any other key. */
export function handleMediaKey(key: string): boolean {
  const action: MediaKeyAction | undefined = mediaKeyAction(key);
  const player = controls;
  if (!action || !player) return false;
  switch (action) {
    case 'playPause':
      player.togglePlay();
      break;
    case 'play':
      player.play();
      break;
    case 'pause':
      player.pause();
      break;
    case 'stop':
      player.stop();
      break;
    case 'next':
      if (nextAvailable) player.next();
      break;
    case 'previous':
      player.previous();
      break;
    case 'forward':
      player.skip(SKIP_SECONDS);
      break;
    case 'back':
      player.skip(-SKIP_SECONDS);
      break;
  }
  return true;
}
