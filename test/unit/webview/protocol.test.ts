// The player's message protocol: the guards both sides use must accept every message the other side builds and
// reject anything else (a webview message is untyped JSON).
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type LoadMessage,
  MAX_RATE,
  MIN_RATE,
  PLAYBACK_RATES,
  clampRate,
  isHostMessage,
  isPageMessage,
  isPlayerPageState,
  stepRate,
} from '../../../src/webview/protocol';

const load: LoadMessage = {
  type: 'load',
  job: { id: 'job_1', title: 'Bees', model: 'article-audio-1-mini', sourceLabel: 'bees.md', hasSourceDocument: true },
  audioUrl: 'https://file+.vscode-resource.vscode-cdn.net/x/audio.mp3',
  cues: [
    { start: 0, end: 1.5, text: 'Hi.', speaker: 'Alex' },
    { start: 1.5, end: 3, text: 'Bye.' },
  ],
  chapters: [{ title: 'Bees', level: 1, start: 0, end: 3 }],
  durationS: 3,
  position: 1.2,
  rate: 1.5,
  volume: 0.8,
  muted: false,
};

describe('player: protocol guards', () => {
  it('accepts the messages the extension sends', () => {
    assert.ok(isHostMessage(load));
    assert.ok(isHostMessage(JSON.parse(JSON.stringify(load))));
    assert.ok(
      isHostMessage({ ...load, cues: [], chapters: [], durationS: undefined, transcriptNote: 'No transcript.' }),
    );
    assert.ok(
      isHostMessage({
        type: 'unavailable',
        job: { id: 'j', title: 'T' },
        reason: 'gone',
        actions: ['retryJob', 'pickJob'],
      }),
    );
  });

  it('rejects malformed extension messages', () => {
    const bad: unknown[] = [
      null,
      'load',
      [],
      {},
      { type: 'nope' },
      { ...load, job: { ...load.job, id: '' } },
      { ...load, audioUrl: 42 },
      { ...load, cues: [{ start: '0', end: 1, text: 'x' }] },
      { ...load, cues: [{ start: 0, end: 1, text: 'x', speaker: 7 }] },
      { ...load, chapters: [{ title: 'x', level: 1, start: 0 }] },
      { ...load, position: -1 },
      { ...load, position: Number.NaN },
      { ...load, rate: MAX_RATE + 0.5 },
      { ...load, rate: MIN_RATE - 0.25 },
      { ...load, volume: 1.1 },
      { ...load, muted: 'no' },
      { type: 'unavailable', job: { id: 'j', title: 'T' }, reason: 'gone', actions: ['formatDisk'] },
      { type: 'control', command: 'play' },
      { ...load, type: 'progress' },
    ];
    for (const message of bad) assert.equal(isHostMessage(message), false, JSON.stringify(message));
  });

  it('accepts the messages the page sends and rejects others', () => {
    const good: unknown[] = [
      { type: 'ready' },
      { type: 'progress', jobId: 'j', time: 12.5, cue: 3, playing: true, ended: false },
      { type: 'progress', jobId: 'j', time: 0, cue: -1, playing: false, ended: false },
      { type: 'progress', jobId: 'j', time: 30, cue: 9, playing: false, ended: true, sleep: true },
      { type: 'next' },
      { type: 'settings', rate: 2, volume: 0, muted: true },
      { type: 'settings', rate: 4, volume: 1, muted: false },
      { type: 'action', action: 'saveAs', jobId: 'j' },
      { type: 'error', jobId: 'j', message: 'MEDIA_ERR_SRC_NOT_SUPPORTED' },
    ];
    for (const message of good) assert.ok(isPageMessage(message), JSON.stringify(message));
    const bad: unknown[] = [
      undefined,
      { type: 'progress', jobId: 'j', time: -3, cue: 0, playing: true, ended: false },
      { type: 'progress', jobId: 'j', time: 1, cue: 1.5, playing: true, ended: false },
      { type: 'progress', jobId: 'j', time: 1, cue: -2, playing: true, ended: false },
      { type: 'progress', jobId: '', time: 1, cue: 0, playing: true, ended: false },
      { type: 'settings', rate: 4.5, volume: 1, muted: false },
      { type: 'progress', jobId: 'j', time: 1, cue: 0, playing: false, ended: true, sleep: 'yes' },
      { type: 'action', action: 'runShell', jobId: 'j' },
      { type: 'error', message: 'no job' },
    ];
    for (const message of bad) assert.equal(isPageMessage(message), false, JSON.stringify(message));
  });

  it('checks the live-playback messages: parts without bytes, bytes on request, and how the job ended', () => {
    const part = { index: 0, startS: 0, durationS: 1, final: false, cues: [{ start: 0, end: 1, text: 'Hi.' }] };
    const liveLoad = { ...load, audioUrl: '', live: { parts: [part] } };
    assert.ok(isHostMessage(liveLoad));
    assert.ok(
      isHostMessage({
        ...liveLoad,
        live: { parts: [part], ended: { state: 'cancelled', note: 'Cancelled.', actions: ['retryJob'] } },
      }),
    );
    assert.ok(isHostMessage({ type: 'part', jobId: 'j', part }));
    assert.ok(isHostMessage({ type: 'partAudio', jobId: 'j', index: 3, bytes: new Uint8Array([0xff, 0xfb]) }));
    assert.ok(isHostMessage({ type: 'partAudio', jobId: 'j', index: 3, error: 'gone' }));
    assert.ok(isHostMessage({ type: 'liveEnd', jobId: 'j', state: 'finished', note: '', actions: [], cues: [] }));
    assert.ok(isHostMessage({ type: 'liveEnd', jobId: 'j', state: 'failed', note: 'x', actions: ['retryJob'] }));
    assert.ok(isPageMessage({ type: 'needPart', jobId: 'j', index: 0 }));
    const bad: unknown[] = [
      { ...liveLoad, live: { parts: [{ ...part, index: -1 }] } },
      { ...liveLoad, live: { parts: [part], ended: { state: 'exploded', note: '', actions: [] } } },
      { ...liveLoad, live: { parts: [part], ended: { state: 'failed', note: '', actions: ['formatDisk'] } } },
      { type: 'partAudio', jobId: 'j', index: 3 },
      { type: 'partAudio', jobId: 'j', index: 1.5, bytes: new Uint8Array(1) },
      { type: 'partAudio', jobId: 'j', index: 1, bytes: [1, 2] },
      { type: 'liveEnd', jobId: 'j', state: 'finished', note: '', actions: [], cues: [{ start: 'x' }] },
      { type: 'liveEnd', jobId: '', state: 'finished', note: '', actions: [] },
    ];
    for (const message of bad) assert.equal(isHostMessage(message), false, JSON.stringify(message));
    assert.equal(isPageMessage({ type: 'needPart', jobId: 'j', index: -1 }), false);
    assert.equal(isPageMessage({ type: 'needPart', jobId: 'j' }), false);
  });

  it('checks the state the serializer gets back', () => {
    assert.ok(isPlayerPageState({ jobId: 'job_1' }));
    assert.equal(isPlayerPageState(undefined), false);
    assert.equal(isPlayerPageState({ jobId: 3 }), false);
  });

  it('steps the speed through the offered rates and clamps it', () => {
    assert.equal(stepRate(1, 1), 1.25);
    assert.equal(stepRate(1, -1), 0.75);
    assert.equal(stepRate(1.1, -1), 1, 'from an odd rate, to the nearest offered one');
    assert.equal(stepRate(MAX_RATE, 1), MAX_RATE);
    assert.equal(stepRate(MIN_RATE, -1), MIN_RATE);
    assert.deepEqual([PLAYBACK_RATES[0], PLAYBACK_RATES.at(-1)], [MIN_RATE, MAX_RATE]);
    assert.equal(MAX_RATE, 4, 'speeds up to 4×');
    assert.equal(stepRate(3, 1), 3.5);
    assert.equal(stepRate(3.5, 1), 4);
    assert.equal(stepRate(4, -1), 3.5);
    assert.equal(clampRate(4), 4);
    assert.equal(clampRate(9), MAX_RATE);
    assert.equal(clampRate(Number.NaN), 1);
  });
});
