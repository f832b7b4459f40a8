// How much of an output file the client accepts, and for how long it waits for it. A service, or the host an output's
// address names, could otherwise stream an endless body until the disk is full (issue 23). The spec fixes no bitrate
// and no sizes, so the caps are what no honest file of that kind exceeds: audio at MP3's highest bitrate (320 kbps)
// for the length the job announced, plus a margin; without a length, a fixed generous cap. Text outputs are small.
export type OutputKind = 'audio' | 'transcript' | 'chapters' | 'article';

const MIB = 1024 * 1024;

export const DOWNLOAD_LIMITS = {
  /** MP3's highest bitrate, 320 kbps: no MP3 of a given length is larger (plus its tags). */
  audioBytesPerSecond: 40_000,
  /** Room for ID3 tags, cover art and a service that rounds `duration_s` down. */
  audioMarginBytes: 2 * MIB,
  audioMarginFactor: 1.25,
  /** Audio whose length the service did not say: about 2 h at 320 kbps, over 9 h at 64 kbps. */
  audioUnknownBytes: 300 * MIB,
  /** No audio is larger, whatever length the service claims. */
  audioMaxBytes: 600 * MIB,
  /** 100,000 characters of text give about 300 KB of WebVTT. */
  transcriptBytes: 16 * MIB,
  chaptersBytes: 4 * MIB,
  articleBytes: 8 * MIB,
  /** The whole download must average at least this (256 kbit/s) beyond its first minute… */
  minBytesPerSecond: 32 * 1024,
  /** …and gets at least this long. */
  minDeadlineMs: 60_000,
} as const;

/** What kind of output a file is: by content type, else by the address's extension, else audio (the spec's output). */
export function outputKindOf(file: { url: string; contentType?: string | undefined }): OutputKind {
  const type = file.contentType?.split(';')[0]?.trim().toLowerCase();
  if (type?.startsWith('audio/')) return 'audio';
  if (type === 'text/vtt') return 'transcript';
  if (type === 'application/json') return 'chapters';
  if (type === 'text/markdown') return 'article';
  let pathname = '';
  try {
    pathname = new URL(file.url).pathname.toLowerCase();
  } catch {
    return 'audio';
  }
  if (pathname.endsWith('.vtt')) return 'transcript';
  if (pathname.endsWith('.json')) return 'chapters';
  if (pathname.endsWith('.md')) return 'article';
  return 'audio';
}

/** The most bytes the client accepts for this output, and how that was decided (for the error message). */
export function downloadLimitFor(file: {
  url: string;
  contentType?: string | undefined;
  durationS?: number | undefined;
}): {
  kind: OutputKind;
  maxBytes: number;
  basis: string;
} {
  const kind = outputKindOf(file);
  const limits = DOWNLOAD_LIMITS;
  switch (kind) {
    case 'transcript':
      return { kind, maxBytes: limits.transcriptBytes, basis: 'the limit for a transcript' };
    case 'chapters':
      return { kind, maxBytes: limits.chaptersBytes, basis: 'the limit for a chapter list' };
    case 'article':
      return { kind, maxBytes: limits.articleBytes, basis: 'the limit for an article text' };
    case 'audio': {
      const seconds = file.durationS;
      if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) {
        return { kind, maxBytes: limits.audioUnknownBytes, basis: 'the limit for audio of unknown length' };
      }
      const derived = Math.ceil(
        seconds * limits.audioBytesPerSecond * limits.audioMarginFactor + limits.audioMarginBytes,
      );
      return derived < limits.audioMaxBytes
        ? { kind, maxBytes: derived, basis: `${Math.round(seconds)} s of audio, as the service announced` }
        : { kind, maxBytes: limits.audioMaxBytes, basis: 'the limit for any audio' };
    }
  }
}

/** How long a download of at most `bytes` may take in all. */
export function downloadDeadlineMs(bytes: number): number {
  return Math.ceil(DOWNLOAD_LIMITS.minDeadlineMs + (bytes / DOWNLOAD_LIMITS.minBytesPerSecond) * 1000);
}

/** "1.4 MB", "300 MB", "512 bytes": sizes in messages. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(bytes < 10_000 ? 1 : 0)} kB`;
  return `${(bytes / 1_000_000).toFixed(bytes < 100_000_000 ? 1 : 0)} MB`;
}
