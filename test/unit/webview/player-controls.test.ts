// The pure parts of the player's controls: which media key asks for what, the position given to the OS media
// session (never NaN or infinite, which make setPositionState throw), and the sleep timer's choices, countdown and fade.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_SLEEP_MINUTES,
  SLEEP_FADE_S,
  SleepCountdown,
  mediaKeyAction,
  parseSleepChoice,
  positionState,
} from '../../../src/webview/player-controls';

describe('player controls: media keys and the media session', () => {
  it('maps the media keys by their KeyboardEvent.key names, and nothing else', () => {
    assert.equal(mediaKeyAction('MediaPlayPause'), 'playPause');
    assert.equal(mediaKeyAction('MediaTrackNext'), 'next');
    assert.equal(mediaKeyAction('MediaTrackPrevious'), 'previous');
    assert.equal(mediaKeyAction('MediaStop'), 'stop');
    assert.equal(mediaKeyAction('MediaPlay'), 'play');
    assert.equal(mediaKeyAction('MediaPause'), 'pause');
    assert.equal(mediaKeyAction(' '), undefined);
    assert.equal(mediaKeyAction('toString'), undefined, 'not a property of every object');
    assert.equal(mediaKeyAction('__proto__'), undefined);
  });

  it('gives a position state only for a known length, inside it', () => {
    assert.deepEqual(positionState(100, 12.5, 1.5), { duration: 100, position: 12.5, playbackRate: 1.5 });
    assert.equal(positionState(Number.NaN, 3, 1), undefined, 'no metadata yet');
    assert.equal(positionState(Number.POSITIVE_INFINITY, 3, 1), undefined, 'a live stream');
    assert.equal(positionState(0, 0, 1), undefined);
    assert.deepEqual(positionState(10, 10.4, 1), { duration: 10, position: 10, playbackRate: 1 }, 'clamped to the end');
    assert.deepEqual(positionState(10, Number.NaN, 0), { duration: 10, position: 0, playbackRate: 1 });
  });
});

describe('player controls: the sleep timer', () => {
  it('reads the choices of the list and the minutes field', () => {
    assert.deepEqual(parseSleepChoice('off'), { kind: 'off' });
    assert.deepEqual(parseSleepChoice('end'), { kind: 'end' });
    assert.deepEqual(parseSleepChoice('15'), { kind: 'minutes', minutes: 15 });
    assert.deepEqual(parseSleepChoice(' 90 '), { kind: 'minutes', minutes: 90 });
    assert.deepEqual(parseSleepChoice(String(MAX_SLEEP_MINUTES)), { kind: 'minutes', minutes: MAX_SLEEP_MINUTES });
    for (const bad of ['', '0', '-5', '1.5', '1e3', String(MAX_SLEEP_MINUTES + 1), 'custom', 'NaN'])
      assert.equal(parseSleepChoice(bad), undefined, bad);
  });

  it('counts down listening time, fades over the last seconds, and is done at zero', () => {
    const timer = new SleepCountdown(1);
    assert.equal(timer.label(), '1:00');
    assert.equal(timer.volumeFactor(), 1);
    timer.tick(0.25);
    assert.equal(timer.label(), '1:00', 'rounded up: a started second still shows');
    for (let i = 0; i < 49; i++) timer.tick(1);
    assert.ok(Math.abs(timer.remainingS - 10.75) < 1e-9);
    assert.equal(timer.fading, false);
    assert.equal(timer.volumeFactor(), 1);
    timer.tick(1);
    assert.equal(timer.fading, true, `fading from ${SLEEP_FADE_S} s before the end`);
    timer.tick(4.75);
    assert.ok(Math.abs(timer.volumeFactor() - 0.5) < 1e-9, 'half way through the fade, half the volume');
    assert.equal(timer.label(), '0:05');
    timer.tick(4.75);
    assert.equal(timer.label(), '0:01');
    assert.equal(timer.done, false);
    timer.tick(1);
    assert.equal(timer.done, true);
    assert.equal(timer.fading, false);
    assert.equal(timer.volumeFactor(), 0);
    assert.equal(timer.remainingS, 0, 'never below zero');
  });

  it('bounds odd steps of the clock (a laptop waking from sleep, a clock going back)', () => {
    const timer = new SleepCountdown(5);
    timer.tick(3_600);
    assert.equal(timer.remainingS, 5 * 60 - 5, 'one tick counts at most 5 s');
    timer.tick(-30);
    timer.tick(Number.NaN);
    assert.equal(timer.remainingS, 5 * 60 - 5);
  });
});
