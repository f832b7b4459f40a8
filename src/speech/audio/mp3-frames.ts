// Just enough MP3 frame parsing to cut an encoded stream into parts at frame boundaries and to leave out the
// Xing/Info frame (a header for the whole file, which would be a silent or wrong frame inside a part).

const BITRATES_V1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

export interface FrameHeader {
  /** Bytes of the whole frame. */
  length: number;
  /** Samples per channel it decodes to. */
  samples: number;
  sampleRate: number;
  /** A Xing/Info header frame (no audio of its own). */
  info: boolean;
}

/** The Layer III frame starting at `offset`, or undefined when no valid frame header is there. */
export function frameAt(bytes: Uint8Array, offset: number): FrameHeader | undefined {
  if (offset + 4 > bytes.length) return undefined;
  const b1 = bytes[offset + 1]!;
  const b2 = bytes[offset + 2]!;
  if (bytes[offset] !== 0xff || (b1 & 0xe0) !== 0xe0) return undefined;
  const version = (b1 >> 3) & 3;
  const layer = (b1 >> 1) & 3;
  if (version === 1 || layer !== 1) return undefined;
  const bitrate = (version === 3 ? BITRATES_V1 : BITRATES_V2)[(b2 >> 4) & 15];
  const sampleRate = RATES[version]![(b2 >> 2) & 3];
  if (!bitrate || !sampleRate) return undefined;
  const padding = (b2 >> 1) & 1;
  const samples = version === 3 ? 1152 : 576;
  const length = Math.floor(((samples / 8) * bitrate * 1000) / sampleRate) + padding;
  const mono = bytes[offset + 3]! >> 6 === 3;
  const sideInfo = version === 3 ? (mono ? 17 : 32) : mono ? 9 : 17;
  const tagAt = offset + 4 + sideInfo;
  const tag = tagAt + 4 <= bytes.length ? String.fromCharCode(...bytes.subarray(tagAt, tagAt + 4)) : '';
  return { length, samples, sampleRate, info: tag === 'Xing' || tag === 'Info' };
}

/**
 * Whole audio frames from the start of `bytes`, at most `limit` of them (Xing/Info frames at the start are skipped,
 * not counted): how many bytes they end at, how many frames and samples they hold, and the bytes skipped before them.
 */
export function wholeFrames(
  bytes: Uint8Array,
  limit = Infinity,
): { bytes: number; frames: number; samples: number; skip: number } {
  let offset = 0;
  let samples = 0;
  let frames = 0;
  let skip = 0;
  while (frames < limit) {
    const frame = frameAt(bytes, offset);
    if (!frame || offset + frame.length > bytes.length) break;
    if (frame.info && offset === skip) {
      skip += frame.length;
    } else {
      samples += frame.samples;
      frames++;
    }
    offset += frame.length;
  }
  return { bytes: offset, frames, samples, skip };
}

/** Bytes of an ID3v2 tag at the start of `bytes` (its header, frames, padding and footer), 0 when there is none. */
export function id3Length(bytes: Uint8Array): number {
  if (bytes.length < 10 || bytes[0] !== 0x49 || bytes[1] !== 0x44 || bytes[2] !== 0x33) return 0;
  const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
  const footer = bytes[5]! & 0x10 ? 10 : 0;
  return 10 + size + footer;
}

/**
 * Where the audio frames of a whole MP3 file start: after its ID3v2 tag and its Info frame. Parts are slices of
 * what follows, so the parts of a job one after another are exactly `file.subarray(audioStart(file))`.
 */
export function audioStart(bytes: Uint8Array): number {
  const tag = id3Length(bytes);
  const first = frameAt(bytes, tag);
  return first?.info ? tag + first.length : tag;
}
