// The MP3 writer's file: its Info frame (Xing + LAME header) read back by hand, and decoded by a gapless decoder
// (mpg123, the engine's own intro/outro decoder) to check that the declared encoder delay and padding are what LAME
// really added: the decoded audio is exactly the samples written, sample for sample in place.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import decodeMp3 from '@audio/decode-mp3';
import { audioStart, frameAt, id3Length, wholeFrames } from '../../../src/speech/audio/mp3-frames';
import { id3Tag } from '../../../src/speech/audio/id3';
import { crc16, LAME_ENCODER_DELAY, Mp3Writer } from '../../../src/speech/audio/mp3-writer';

const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-mp3-writer-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** MPEG decoders' own delay (the synthesis filterbank), which LAME-tag readers add to the tag's encoder delay. */
const DECODER_DELAY = 529;

interface LameTag {
  tag: string;
  frames: number;
  bytes: number;
  encoder: string;
  delay: number;
  padding: number;
  musicLength: number;
  musicCrc: number;
  tagCrc: number;
  /** CRC-16 of the frame up to the tag CRC, as the file should declare it. */
  computedTagCrc: number;
  frameLength: number;
}

/** Reads a Xing/Info frame with its LAME extension (the layout LAME's VbrTag.c writes). */
function readLameTag(bytes: Uint8Array, offset: number): LameTag {
  const frame = frameAt(bytes, offset);
  assert.ok(frame?.info, 'an Info frame is where the audio starts');
  const mono = bytes[offset + 3]! >> 6 === 3;
  const mpeg1 = ((bytes[offset + 1]! >> 3) & 3) === 3;
  const xing = offset + 4 + (mpeg1 ? (mono ? 17 : 32) : mono ? 9 : 17);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const flags = view.getUint32(xing + 4);
  assert.equal(flags & 0x0f, 0x0f, 'frames, bytes, seek table and quality are all declared');
  const lame = xing + 120;
  const ascii = (from: number, length: number) => String.fromCharCode(...bytes.subarray(from, from + length));
  return {
    tag: ascii(xing, 4),
    frames: view.getUint32(xing + 8),
    bytes: view.getUint32(xing + 12),
    encoder: ascii(lame, 9),
    delay: (bytes[lame + 21]! << 4) | (bytes[lame + 22]! >> 4),
    padding: ((bytes[lame + 22]! & 0x0f) << 8) | bytes[lame + 23]!,
    musicLength: view.getUint32(lame + 28),
    musicCrc: view.getUint16(lame + 32),
    tagCrc: view.getUint16(lame + 34),
    computedTagCrc: crc16(bytes.subarray(offset, lame + 34)),
    frameLength: frame.length,
  };
}

/** An impulse at 1 s and a short tone at 2 s in silence: where they land in the decoded audio shows any shift. */
function probeSignal(rate: number, seconds: number): Float32Array {
  const samples = new Float32Array(Math.round(rate * seconds) + 123);
  samples[rate] = 0.9;
  for (let i = 2 * rate; i < 2 * rate + 400; i++) samples[i] = 0.5 * Math.sin(i / 3);
  return samples;
}

function peakAt(samples: Float32Array, end: number): number {
  let best = 0;
  let at = -1;
  for (let i = 0; i < Math.min(end, samples.length); i++) {
    if (Math.abs(samples[i]!) > best) {
      best = Math.abs(samples[i]!);
      at = i;
    }
  }
  return at;
}

describe('MP3 writer', () => {
  for (const [rate, bitrate] of [
    [16_000, 32_000],
    [16_000, 48_000],
    [24_000, 64_000],
  ] as const) {
    it(`declares the encoder delay and padding LAME really adds (${rate} Hz, ${bitrate / 1000} kbps)`, async () => {
      const file = path.join(dir, `probe-${rate}-${bitrate}.mp3`);
      const input = probeSignal(rate, 3);
      const writer = await Mp3Writer.create(file, rate, bitrate);
      // In uneven pieces, as lines arrive.
      await writer.write(input.subarray(0, 5000));
      await writer.write(input.subarray(5000, 30_011));
      await writer.write(input.subarray(30_011));
      const size = await writer.finish();
      const bytes = new Uint8Array(readFileSync(file));
      assert.equal(size, bytes.length);

      const tag = readLameTag(bytes, 0);
      const audio = bytes.subarray(tag.frameLength);
      const frames = wholeFrames(audio);
      assert.equal(tag.tag, 'Info', 'a constant-bitrate stream says Info');
      assert.equal(tag.encoder, 'LAME3.100');
      assert.equal(tag.frames, frames.frames, 'the frame count is the audio frames in the file');
      assert.equal(frames.bytes, audio.length, 'nothing but whole frames after the Info frame');
      assert.equal(tag.bytes, bytes.length, 'the byte count is the Info frame and the audio');
      assert.equal(tag.musicLength, bytes.length);
      assert.equal(tag.musicCrc, crc16(audio));
      assert.equal(tag.tagCrc, tag.computedTagCrc, 'the tag CRC is valid (players ignore a tag that fails it)');
      assert.equal(tag.delay, LAME_ENCODER_DELAY);
      assert.equal(tag.padding, frames.samples - input.length - tag.delay, 'delay + input + padding = all frames');

      // Without the Info frame, a decoder shows LAME's delay: the impulse comes late by delay + the decoder's own.
      const raw = await decodeMp3(audio);
      assert.equal(raw.channelData[0]!.length, frames.samples);
      assert.equal(peakAt(raw.channelData[0]!, rate * 1.5), rate + tag.delay + DECODER_DELAY);

      // With it, a gapless decoder trims exactly that: the same number of samples as written, nothing shifted.
      const decoded = await decodeMp3(bytes);
      assert.equal(decoded.sampleRate, rate);
      assert.equal(decoded.channelData[0]!.length, input.length, 'the decoded audio is exactly as long as the input');
      assert.equal(peakAt(decoded.channelData[0]!, rate * 1.5), rate, 'the impulse is where it was written');
    });
  }

  it('puts the ID3 tag before the Info frame, which still counts only the audio', async () => {
    const file = path.join(dir, 'tagged.mp3');
    const input = probeSignal(16_000, 2);
    const writer = await Mp3Writer.create(file, 16_000, 32_000);
    const frames: Uint8Array[] = [];
    const untagged = await Mp3Writer.create(path.join(dir, 'untagged.mp3'), 16_000, 32_000, {
      onFrames: (data) => frames.push(data),
    });
    await writer.write(input);
    await untagged.write(input);
    const id3 = id3Tag({
      title: 'Probe',
      encoder: 'test',
      chapters: [{ title: 'All', level: 1, startS: 0 }],
      durationS: 2,
    });
    const size = await writer.finish(id3);
    await untagged.finish();
    const bytes = new Uint8Array(readFileSync(file));
    assert.equal(size, bytes.length);
    assert.equal(id3Length(bytes), id3.length);
    assert.deepEqual(bytes.subarray(0, id3.length), id3);
    const tag = readLameTag(bytes, id3.length);
    assert.equal(tag.bytes, bytes.length - id3.length, 'the Info frame counts its stream, not the tag');
    assert.equal(tag.tagCrc, tag.computedTagCrc);
    // The tagged file's audio is the untagged one's, and what onFrames saw is exactly that audio.
    const untaggedBytes = new Uint8Array(readFileSync(path.join(dir, 'untagged.mp3')));
    assert.deepEqual(bytes.subarray(audioStart(bytes)), untaggedBytes.subarray(audioStart(untaggedBytes)));
    assert.deepEqual(Buffer.concat(frames), Buffer.from(untaggedBytes.subarray(audioStart(untaggedBytes))));
    const decoded = await decodeMp3(bytes);
    assert.equal(decoded.channelData[0]!.length, input.length);
  });
});
