// Checks that bytes are one complete MP3 file: walks every MPEG audio frame header from the start (after an ID3v2
// tag) to the last byte, so a truncated, padded or torn file is caught, then decodes it for real.

export interface Mp3Facts {
  frames: number;
  sampleRate: number;
  /** Seconds, from the frame count. */
  durationS: number;
  /** Seconds of samples the decoder produced. */
  decodedS: number;
}

const BITRATES_V1_L3 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_V2_L3 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const RATES: Record<number, number[]> = {
  3: [44_100, 48_000, 32_000],
  2: [22_050, 24_000, 16_000],
  0: [11_025, 12_000, 8_000],
};

export async function checkMp3(bytes: Uint8Array): Promise<Mp3Facts> {
  let offset = 0;
  if (bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33) {
    offset =
      10 + (((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f));
  }
  let end = bytes.length;
  // An ID3v1 tag at the very end is allowed.
  if (end - offset >= 128 && bytes[end - 128] === 0x54 && bytes[end - 127] === 0x41 && bytes[end - 126] === 0x47)
    end -= 128;
  let frames = 0;
  let samples = 0;
  let sampleRate = 0;
  while (offset < end) {
    if (end - offset < 4) throw new Error(`${end - offset} stray bytes at the end (offset ${offset})`);
    const b1 = bytes[offset + 1]!;
    const b2 = bytes[offset + 2]!;
    if (bytes[offset] !== 0xff || (b1 & 0xe0) !== 0xe0)
      throw new Error(`no frame sync at offset ${offset} of ${bytes.length} (frame ${frames})`);
    const version = (b1 >> 3) & 3;
    const layer = (b1 >> 1) & 3;
    if (version === 1 || layer !== 1) throw new Error(`not MPEG layer III at offset ${offset}`);
    const bitrate = (version === 3 ? BITRATES_V1_L3 : BITRATES_V2_L3)[(b2 >> 4) & 15];
    const rate = RATES[version]?.[(b2 >> 2) & 3];
    if (!bitrate || !rate) throw new Error(`bad bitrate or sample rate in the frame at offset ${offset}`);
    if (sampleRate !== 0 && rate !== sampleRate) throw new Error(`the sample rate changes at offset ${offset}`);
    sampleRate = rate;
    const perFrame = version === 3 ? 1152 : 576;
    const length = Math.floor(((perFrame / 8) * bitrate * 1000) / rate) + ((b2 >> 1) & 1);
    if (offset + length > end) throw new Error(`the last frame is cut: ${end - offset} of ${length} bytes`);
    offset += length;
    frames++;
    samples += perFrame;
  }
  if (frames === 0) throw new Error('no MP3 frames');
  const decode = (await import('@audio/decode-mp3')).default as (
    data: Uint8Array,
  ) => Promise<{ channelData: Float32Array[]; sampleRate: number }>;
  const decoded = await decode(bytes);
  const decodedS = (decoded.channelData[0]?.length ?? 0) / decoded.sampleRate;
  return { frames, sampleRate, durationS: samples / sampleRate, decodedS };
}
