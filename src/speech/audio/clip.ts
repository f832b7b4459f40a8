// Intro and outro audio: MP3, OGG (Vorbis or Opus) or WAV bytes -> mono samples at the speech's rate, levelled and faded.
// Runs in the parse worker (parse-worker.ts), never on the engine's main thread.
//
// A small file can hold hours of audio at a low sample rate (10 MiB of 16-bit WAV at 1000 Hz is 87 minutes, 84
// million samples once resampled to 16 kHz), so the file's rate and length are read from its headers and bounded
// *before* anything is decoded, and the resampler is fed in chunks.
import { fadeIn, fadeOut, sniffAudioFormat, type AudioFormat } from './audio';
import { levelToLoudness } from './loudness';
import { StreamResampler } from './resample';

/** Opus decodes at 48 kHz whatever rate its input had. */
const OPUS_RATE = 48_000;

export interface ClipLimits {
  /** Longest intro or outro accepted, in seconds. */
  maxSeconds: number;
}

/** Rates real audio files use; outside them a file is broken or made to blow up the resampler. */
export const MIN_CLIP_RATE = 8000;
export const MAX_CLIP_RATE = 192_000;
const MAX_CHANNELS = 8;
const FADE_S = 0.35;

/** A reason the file cannot be used, phrased to follow "The intro audio at <url> cannot be used: ". */
export class ClipProblem extends Error {
  constructor(
    message: string,
    /** What to do instead, when it is not "use another MP3, OGG or WAV file". */
    readonly advice?: string,
  ) {
    super(message);
  }
}

export interface ClipInfo {
  format: AudioFormat;
  sampleRate: number;
  channels: number;
  /** From the headers; an upper bound where the file does not say exactly. */
  seconds: number;
}

function ascii(bytes: Uint8Array, start: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(start, start + length));
}

function wavInfo(bytes: Uint8Array): ClipInfo {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 12;
  let fmt: { channels: number; sampleRate: number; blockAlign: number } | undefined;
  while (at + 8 <= bytes.length) {
    const id = ascii(bytes, at, 4);
    const size = view.getUint32(at + 4, true);
    if (id === 'fmt ' && at + 24 <= bytes.length) {
      fmt = {
        channels: view.getUint16(at + 10, true),
        sampleRate: view.getUint32(at + 12, true),
        blockAlign: view.getUint16(at + 20, true),
      };
    } else if (id === 'data') {
      if (!fmt) throw new ClipProblem('its WAV header has no format chunk before the audio');
      // A streamed WAV may say 0 or 0xFFFFFFFF; what the file holds is the bound either way.
      const dataBytes = Math.min(size || Infinity, bytes.length - at - 8);
      return {
        format: 'wav',
        channels: fmt.channels,
        sampleRate: fmt.sampleRate,
        seconds: dataBytes / Math.max(1, fmt.blockAlign) / Math.max(1, fmt.sampleRate),
      };
    }
    at += 8 + size + (size % 2);
  }
  throw new ClipProblem('it is a WAV file without audio data');
}

const MP3_BITRATES = {
  v1l1: [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  v1l2: [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  v1l3: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2l1: [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  v2l23: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const MP3_RATES = [44100, 48000, 32000];

/** One MPEG audio frame header at `at`: its length in bytes, samples and rate; undefined when it is not one. */
function mp3Frame(
  bytes: Uint8Array,
  at: number,
): { length: number; samples: number; sampleRate: number; channels: number } | undefined {
  if (at + 4 > bytes.length || bytes[at] !== 0xff || (bytes[at + 1]! & 0xe0) !== 0xe0) return undefined;
  const b1 = bytes[at + 1]!;
  const b2 = bytes[at + 2]!;
  const versionBits = (b1 >> 3) & 3; // 0: 2.5, 2: 2, 3: 1
  const layerBits = (b1 >> 1) & 3; // 1: III, 2: II, 3: I
  if (versionBits === 1 || layerBits === 0) return undefined;
  const bitrateIndex = b2 >> 4;
  const rateIndex = (b2 >> 2) & 3;
  if (bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined;
  const v1 = versionBits === 3;
  const layer = 4 - layerBits;
  const table = v1
    ? layer === 1
      ? MP3_BITRATES.v1l1
      : layer === 2
        ? MP3_BITRATES.v1l2
        : MP3_BITRATES.v1l3
    : layer === 1
      ? MP3_BITRATES.v2l1
      : MP3_BITRATES.v2l23;
  const bitrate = table[bitrateIndex]! * 1000;
  const sampleRate = MP3_RATES[rateIndex]! / (v1 ? 1 : versionBits === 2 ? 2 : 4);
  const padding = (b2 >> 1) & 1;
  const samples = layer === 1 ? 384 : layer === 3 && !v1 ? 576 : 1152;
  const length =
    layer === 1
      ? (Math.floor((12 * bitrate) / sampleRate) + padding) * 4
      : Math.floor(((samples / 8) * bitrate) / sampleRate) + padding;
  const channels = ((bytes[at + 3]! >> 6) & 3) === 3 ? 1 : 2;
  return length >= 4 ? { length, samples, sampleRate, channels } : undefined;
}

function mp3Info(bytes: Uint8Array): ClipInfo {
  let at = 0;
  // An ID3v2 tag: 10 bytes of header, then a size in 7-bit bytes.
  if (ascii(bytes, 0, 3) === 'ID3' && bytes.length >= 10)
    at = 10 + ((bytes[6]! << 21) | (bytes[7]! << 14) | (bytes[8]! << 7) | bytes[9]!);
  let samples = 0;
  let first: ReturnType<typeof mp3Frame>;
  while (at < bytes.length) {
    const frame = mp3Frame(bytes, at);
    if (!frame) {
      at++; // junk between frames: look for the next sync word
      continue;
    }
    first ??= frame;
    samples += frame.samples;
    at += frame.length;
  }
  if (!first) throw new ClipProblem('it is not an MP3 file (no audio frame found)');
  return { format: 'mp3', sampleRate: first.sampleRate, channels: first.channels, seconds: samples / first.sampleRate };
}

/** Whether OGG bytes carry Opus (the first packet is the "OpusHead" identification header), not Vorbis. */
export function isOggOpus(bytes: Uint8Array): boolean {
  const packet = 27 + (bytes[26] ?? 0);
  return ascii(bytes, packet, 8) === 'OpusHead';
}

function oggInfo(bytes: Uint8Array): ClipInfo {
  // The first page carries the identification header: Vorbis "\x01vorbis", version, channels, rate; or Opus
  // "OpusHead", version, channels, pre-skip, input rate (Opus always decodes at 48 kHz, and counts granules in it).
  const segments = bytes[26] ?? 0;
  const packet = 27 + segments;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const opus = isOggOpus(bytes) && packet + 19 <= bytes.length;
  if (!opus && (bytes[packet] !== 1 || ascii(bytes, packet + 1, 6) !== 'vorbis' || packet + 16 > bytes.length))
    throw new ClipProblem('it is an OGG file without Vorbis or Opus audio');
  const channels = opus ? bytes[packet + 9]! : bytes[packet + 11]!;
  const sampleRate = opus ? OPUS_RATE : view.getUint32(packet + 12, true);
  // The last page's granule position is the stream's length in samples.
  let last = -1;
  for (let at = bytes.length - 27; at >= 0; at--) {
    if (bytes[at] === 0x4f && bytes[at + 1] === 0x67 && bytes[at + 2] === 0x67 && bytes[at + 3] === 0x53) {
      last = at;
      break;
    }
  }
  const granule = last >= 0 ? Number(view.getBigUint64(last + 6, true)) : 0;
  // A missing or absurd granule (-1 means "no packet ends here") cannot be trusted: bound by what the bytes can hold
  // (Vorbis needs well over a bit per sample).
  const seconds =
    granule > 0 && granule < 2 ** 50 ? granule / Math.max(1, sampleRate) : (bytes.length * 8) / Math.max(1, sampleRate);
  return { format: 'ogg', sampleRate, channels, seconds };
}

/** The format, rate, channels and length of an audio file, from its headers alone. */
export function probeClip(bytes: Uint8Array): ClipInfo {
  const format = sniffAudioFormat(bytes);
  if (!format) throw new ClipProblem('it is not an MP3, OGG or WAV file');
  return format === 'wav' ? wavInfo(bytes) : format === 'mp3' ? mp3Info(bytes) : oggInfo(bytes);
}

function formatSeconds(seconds: number): string {
  const total = Math.round(seconds);
  if (total < 60) return `${total} s`;
  const rest = total % 60;
  return `${Math.floor(total / 60).toLocaleString('en-US')} min${rest ? ` ${rest} s` : ''}`;
}

/** Refuses what cannot be a reasonable intro or outro before a byte of it is decoded. */
export function checkClip(info: ClipInfo, limits: ClipLimits): void {
  if (!(info.sampleRate >= MIN_CLIP_RATE && info.sampleRate <= MAX_CLIP_RATE)) {
    throw new ClipProblem(
      `its sample rate is ${info.sampleRate.toLocaleString('en-US')} Hz, outside ${MIN_CLIP_RATE.toLocaleString('en-US')} to ${MAX_CLIP_RATE.toLocaleString('en-US')} Hz`,
      'Save it at 44,100 or 48,000 Hz',
    );
  }
  if (!(info.channels >= 1 && info.channels <= MAX_CHANNELS))
    throw new ClipProblem(`it has ${info.channels} channels`, 'Save it as mono or stereo');
  if (info.seconds > limits.maxSeconds) {
    throw new ClipProblem(
      `it is ${formatSeconds(info.seconds)} long; an intro or outro may be at most ${formatSeconds(limits.maxSeconds)}`,
      'Use a shorter clip',
    );
  }
}

interface Decoded {
  channelData: Float32Array[];
  sampleRate: number;
}

async function decode(bytes: Uint8Array, format: AudioFormat): Promise<Decoded> {
  if (format === 'wav') return (await import('@audio/decode-wav')).default(bytes);
  if (format === 'mp3') return (await import('@audio/decode-mp3')).default(bytes);
  if (isOggOpus(bytes)) return (await import('@audio/decode-opus')).default(bytes);
  return (await import('@audio/decode-vorbis')).default(bytes);
}

const CHUNK = 16384;

/** Decodes, mixes down to mono and resamples to `sampleRate` in chunks, never past `maxSeconds` of output. */
export async function decodeClip(bytes: Uint8Array, sampleRate: number, limits: ClipLimits): Promise<Float32Array> {
  const info = probeClip(bytes);
  checkClip(info, limits);
  const decoded = await decode(bytes, info.format);
  const channels = decoded.channelData.filter((c) => c.length > 0);
  if (channels.length === 0 || !decoded.sampleRate) throw new ClipProblem('it holds no audio');
  // The decoder's own view of the file wins over the headers, and is held to the same bounds.
  const length = Math.min(...channels.map((c) => c.length));
  checkClip(
    { ...info, sampleRate: decoded.sampleRate, channels: channels.length, seconds: length / decoded.sampleRate },
    limits,
  );
  const capacity = Math.ceil((length * sampleRate) / decoded.sampleRate);
  const out = new Float32Array(capacity);
  let written = 0;
  const append = (part: Float32Array) => {
    const room = Math.min(part.length, capacity - written);
    out.set(part.subarray(0, room), written);
    written += room;
  };
  const resampler =
    decoded.sampleRate === sampleRate ? undefined : await StreamResampler.create(decoded.sampleRate, sampleRate);
  try {
    const mono = new Float32Array(CHUNK);
    for (let start = 0; start < length; start += CHUNK) {
      const n = Math.min(CHUNK, length - start);
      mono.fill(0);
      for (const channel of channels) for (let i = 0; i < n; i++) mono[i]! += channel[start + i]! / channels.length;
      append(resampler ? resampler.push(mono.subarray(0, n)) : mono.subarray(0, n));
    }
    if (resampler) append(resampler.end());
  } finally {
    resampler?.close();
  }
  return written === capacity ? out : out.subarray(0, written);
}

/** The clip as the pipeline writes it: decoded, matched to the speech's level, with short fades where it meets the voice. */
export async function prepareClip(
  bytes: Uint8Array,
  which: 'intro' | 'outro',
  sampleRate: number,
  limits: ClipLimits,
): Promise<Float32Array> {
  const samples = await decodeClip(bytes, sampleRate, limits);
  if (samples.length < sampleRate * 0.05) throw new ClipProblem('it is empty');
  levelToLoudness(samples, sampleRate);
  const fade = Math.round(FADE_S * sampleRate);
  if (which === 'intro') {
    fadeIn(samples, Math.round(0.02 * sampleRate));
    fadeOut(samples, fade);
  } else {
    fadeIn(samples, fade);
    fadeOut(samples, Math.round(0.05 * sampleRate));
  }
  return samples;
}
