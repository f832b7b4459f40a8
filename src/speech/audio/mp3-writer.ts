// Streams mono PCM into an MP3 file as it is produced, so memory stays flat however long the article. LAME (our own
// WebAssembly build at quality 7, lame.ts) runs right here in the job's audio worker: no second worker, no per-frame
// promises, no sample-format conversions (it takes the Float32 samples as they are).
//
// The file is: [ID3v2 tag, optional] [Info frame] [audio frames]. The Info frame (Xing header for constant bitrate, with
// LAME's extension) is written as a placeholder first and filled in at the end: the exact frame count (exact duration
// for players), a seek table, and the encoder delay and padding, so gapless players trim LAME's silence at both ends.
// The ID3 tag is known only at the end (its chapters' times); it is put in front by one copy of the file, in chunks.
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { LameEncoder } from './lame';
import { frameAt } from './mp3-frames';

/**
 * Samples LAME 3.100 puts before the first input sample (its `lame_get_encoder_delay()`; decoders add 529 of their
 * own, which the LAME tag's readers add themselves). The test in test/unit/pipeline/mp3-writer.test.ts decodes an
 * impulse to check this against the encoder.
 */
export const LAME_ENCODER_DELAY = 576;
const ENCODER_VERSION = 'LAME3.100';

const BITRATES_V1 = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_V2 = [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];

/** CRC-16/ARC (polynomial 0x8005, reflected), which the LAME tag uses for the music and for the tag itself. */
const CRC_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
    table[i] = crc;
  }
  return table;
})();

export function crc16(bytes: Uint8Array, crc = 0): number {
  for (let i = 0; i < bytes.length; i++) crc = (crc >>> 8) ^ CRC_TABLE[(crc ^ bytes[i]!) & 0xff]!;
  return crc;
}

interface StreamFormat {
  sampleRate: number;
  /** Bits per second of the audio frames. */
  bitrate: number;
}

function mpegVersion(sampleRate: number): { bits: number; rates: number[]; samples: number; sideInfo: number } {
  if ([44100, 48000, 32000].includes(sampleRate))
    return { bits: 3, rates: [44100, 48000, 32000], samples: 1152, sideInfo: 17 };
  if ([22050, 24000, 16000].includes(sampleRate))
    return { bits: 2, rates: [22050, 24000, 16000], samples: 576, sideInfo: 9 };
  if ([11025, 12000, 8000].includes(sampleRate))
    return { bits: 0, rates: [11025, 12000, 8000], samples: 576, sideInfo: 9 };
  throw new Error(`MP3 has no ${sampleRate} Hz sample rate.`);
}

/** Bytes of the Info frame: the smallest mono frame of the stream's rate that holds the Xing and LAME headers. */
function infoFrameLayout(format: StreamFormat): { length: number; bitrateIndex: number; xingAt: number } {
  const version = mpegVersion(format.sampleRate);
  const xingAt = 4 + version.sideInfo;
  const needed = xingAt + 120 + 36;
  const table = version.bits === 3 ? BITRATES_V1 : BITRATES_V2;
  for (let i = 0; i < table.length; i++) {
    const length = Math.floor(((version.samples / 8) * table[i]! * 1000) / format.sampleRate);
    // Never smaller than an audio frame: some players take the first frame's size as the stream's.
    if (length >= needed && table[i]! * 1000 >= format.bitrate) return { length, bitrateIndex: i + 1, xingAt };
  }
  throw new Error('No MP3 frame is large enough for the Info header.');
}

export interface InfoFields {
  /** Audio frames after the Info frame. */
  frames: number;
  /** Bytes of the Info frame and the audio frames (an ID3 tag before them is not counted). */
  bytes: number;
  /** Samples of the input, before LAME's delay and padding. */
  samples: number;
  /** CRC-16 of the audio frames. */
  musicCrc: number;
}

/** The Info frame (Xing header with LAME's extension) for a constant-bitrate mono stream. */
export function infoFrame(format: StreamFormat, fields: InfoFields): Uint8Array {
  const version = mpegVersion(format.sampleRate);
  const layout = infoFrameLayout(format);
  const frame = new Uint8Array(layout.length);
  const view = new DataView(frame.buffer);
  const rateIndex = version.rates.indexOf(format.sampleRate);
  // Sync, version, layer III, no CRC; bitrate and rate; no padding; mono.
  frame[0] = 0xff;
  frame[1] = 0xe0 | (version.bits << 3) | (1 << 1) | 1;
  frame[2] = (layout.bitrateIndex << 4) | (rateIndex << 2);
  frame[3] = 0xc0;
  let at = layout.xingAt;
  frame.set([0x49, 0x6e, 0x66, 0x6f], at); // "Info": constant bitrate
  view.setUint32(at + 4, 0x0f); // frames, bytes, seek table, quality
  view.setUint32(at + 8, fields.frames);
  view.setUint32(at + 12, fields.bytes);
  // Seek table: at which 1/256 of the file each percent of the duration starts; linear at a constant bitrate.
  for (let i = 0; i < 100; i++) frame[at + 16 + i] = Math.min(255, Math.floor((i * 256) / 100));
  view.setUint32(at + 116, 0);
  at += 120;
  for (let i = 0; i < ENCODER_VERSION.length; i++) frame[at + i] = ENCODER_VERSION.charCodeAt(i);
  frame[at + 9] = 0x01; // tag revision 0, constant bitrate
  frame[at + 10] = Math.min(255, Math.round(format.sampleRate / 2 / 100)); // lowpass, 100 Hz units
  // Peak and replay gain (at + 11 to + 18) unknown: zero. Flags and ATH type (+ 19) zero.
  frame[at + 20] = Math.min(255, Math.round(format.bitrate / 1000));
  const padding = fields.frames * version.samples - fields.samples - LAME_ENCODER_DELAY;
  const delay = Math.min(4095, LAME_ENCODER_DELAY);
  const pad = Math.max(0, Math.min(4095, padding));
  frame[at + 21] = delay >> 4;
  frame[at + 22] = ((delay & 0x0f) << 4) | (pad >> 8);
  frame[at + 23] = pad & 0xff;
  // Misc (+ 24), MP3 gain (+ 25), preset and surround (+ 26, 27): zero.
  view.setUint32(at + 28, fields.bytes);
  view.setUint16(at + 32, fields.musicCrc);
  view.setUint16(at + 34, crc16(frame.subarray(0, at + 34)));
  return frame;
}

/** Writes sequential chunks through one buffer, so the file sees a few large writes. */
class BufferedFile {
  private buffer = Buffer.alloc(256 * 1024);
  private used = 0;
  position = 0;

  constructor(private readonly handle: FileHandle) {}

  async append(data: Uint8Array): Promise<void> {
    if (this.used + data.length > this.buffer.length) await this.flush();
    if (data.length > this.buffer.length) {
      await this.handle.write(data, 0, data.length, this.position);
      this.position += data.length;
      return;
    }
    this.buffer.set(data, this.used);
    this.used += data.length;
  }

  async flush(): Promise<void> {
    if (this.used > 0) await this.handle.write(this.buffer, 0, this.used, this.position);
    this.position += this.used;
    this.used = 0;
  }

  async writeAt(data: Uint8Array, position: number): Promise<void> {
    await this.handle.write(data, 0, data.length, position);
  }
}

export interface Mp3WriterOptions {
  /** Sees the encoded audio frames as they come, in order (never the ID3 tag or the Info frame). */
  onFrames?: (data: Uint8Array) => void;
  /** LAME's quality setting (default LAME_QUALITY). */
  quality?: number;
}

const COPY_CHUNK = 1024 * 1024;

/** Writes `head` and then the whole of `source` to `target`, a chunk at a time (memory stays flat), and syncs it. */
async function prependCopy(head: Uint8Array, source: string, target: string): Promise<number> {
  const from = await open(source, 'r');
  try {
    const to = await open(target, 'w');
    try {
      await to.write(head, 0, head.length, 0);
      let position = head.length;
      const chunk = Buffer.alloc(COPY_CHUNK);
      for (;;) {
        const { bytesRead } = await from.read(chunk, 0, chunk.length, position - head.length);
        if (bytesRead === 0) break;
        await to.write(chunk, 0, bytesRead, position);
        position += bytesRead;
      }
      await to.sync();
      return position;
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
}

export class Mp3Writer {
  private samplesWritten = 0;
  private frames = 0;
  private audioBytes = 0;
  private musicCrc = 0;
  /** The end of the encoder's output that is not a whole frame yet. */
  private carry: Uint8Array = new Uint8Array(0);
  private readonly infoLength: number;

  private constructor(
    private readonly path: string,
    private readonly handle: FileHandle,
    private readonly file: BufferedFile,
    private readonly encoder: LameEncoder,
    readonly sampleRate: number,
    readonly bitrate: number,
    private readonly options: Mp3WriterOptions,
  ) {
    this.infoLength = infoFrameLayout({ sampleRate, bitrate }).length;
  }

  static async create(
    path: string,
    sampleRate: number,
    bitrate: number,
    options: Mp3WriterOptions = {},
  ): Promise<Mp3Writer> {
    const version = mpegVersion(sampleRate);
    if (!(version.bits === 3 ? BITRATES_V1 : BITRATES_V2).includes(bitrate / 1000))
      throw new Error(`MP3 has no ${bitrate / 1000} kbps at ${sampleRate} Hz.`);
    const encoder = await LameEncoder.create(sampleRate, bitrate / 1000, options.quality);
    let handle: FileHandle;
    try {
      handle = await open(path, 'w');
    } catch (error) {
      encoder.close();
      throw error;
    }
    const file = new BufferedFile(handle);
    const writer = new Mp3Writer(path, handle, file, encoder, sampleRate, bitrate, options);
    try {
      // Room for the Info frame, filled in by finish().
      await file.append(new Uint8Array(writer.infoLength));
    } catch (error) {
      encoder.close();
      await handle.close();
      throw error;
    }
    return writer;
  }

  /** Seconds of audio written so far. */
  get durationS(): number {
    return this.samplesWritten / this.sampleRate;
  }

  async write(samples: Float32Array): Promise<void> {
    if (samples.length === 0) return;
    this.samplesWritten += samples.length;
    await this.take(this.encoder.encode(samples));
  }

  /** Whole frames of the encoder's output go to the file and to onFrames; a partial frame waits for the rest. */
  private async take(output: Uint8Array): Promise<void> {
    if (output.length === 0) return;
    let bytes = output; // the encoder's own copy
    if (this.carry.length > 0) {
      bytes = new Uint8Array(this.carry.length + output.length);
      bytes.set(this.carry);
      bytes.set(output, this.carry.length);
    }
    let end = 0;
    for (;;) {
      const frame = frameAt(bytes, end);
      if (!frame || end + frame.length > bytes.length) break;
      end += frame.length;
      this.frames++;
    }
    this.carry = bytes.slice(end);
    if (end === 0) return;
    const frames = bytes.subarray(0, end);
    this.musicCrc = crc16(frames, this.musicCrc);
    this.audioBytes += end;
    this.options.onFrames?.(frames);
    await this.file.append(frames);
  }

  /** Finishes the file, with an ID3 tag before the audio when given; returns its size in bytes. */
  async finish(id3?: Uint8Array): Promise<number> {
    let closed = false;
    try {
      await this.take(this.encoder.flush());
      this.encoder.close();
      if (this.carry.length > 0) throw new Error(`The MP3 encoder ended inside a frame (${this.carry.length} bytes).`);
      await this.file.flush();
      const info = infoFrame(
        { sampleRate: this.sampleRate, bitrate: this.bitrate },
        {
          frames: this.frames,
          bytes: this.infoLength + this.audioBytes,
          samples: this.samplesWritten,
          musicCrc: this.musicCrc,
        },
      );
      await this.file.writeAt(info, 0);
      if (!id3 || id3.length === 0) {
        await this.handle.sync();
        return this.file.position;
      }
      await this.handle.close();
      closed = true;
      // Into a file beside it, then renamed over it: a crash leaves the untagged file or the tagged one, never half.
      const tagged = `${this.path}.tagged`;
      try {
        const size = await prependCopy(id3, this.path, tagged);
        await rename(tagged, this.path);
        return size;
      } catch (error) {
        await rm(tagged, { force: true });
        throw error;
      }
    } finally {
      if (!closed) await this.handle.close();
    }
  }

  /** Stops without finishing (cancelled or failed job); the caller removes the file. */
  async abort(): Promise<void> {
    this.encoder.close();
    await this.handle.close().catch(() => {});
  }
}
