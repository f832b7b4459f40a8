// Input that is not text: a file, a page or a pasted text whose bytes are an image, an archive, a program or other
// data. Read aloud it is minutes of letter names ("asm … wasi_snapshot_preview1args_get"), so the client, the command
// line and the engine refuse it before any work, naming what it looks like. Two signs, either enough: the file
// signature (magic bytes) of a common binary format at the start, or a share of control characters and undecodable
// bytes that no prose has. Plain TypeScript over bytes or a decoded string, shared by every side.

interface Signature {
  what: string;
  /** Bytes at `at`; -1 matches any byte (a length or a size field). */
  bytes: readonly number[];
  at?: number;
  /**
   * A signature of plain letters that a sentence could begin with ("GIF89a is…"): it counts only when a byte that is
   * no text (a control character or a byte above 0x7f) follows within 8 bytes, as the image's size fields give.
   */
  binaryAfter?: boolean;
}

const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

const SIGNATURES: readonly Signature[] = [
  { what: 'a PNG image', bytes: [0x89, ...ascii('PNG\r\n\x1a\n')] },
  { what: 'a JPEG image', bytes: [0xff, 0xd8, 0xff] },
  { what: 'a GIF image', bytes: ascii('GIF87a'), binaryAfter: true },
  { what: 'a GIF image', bytes: ascii('GIF89a'), binaryAfter: true },
  { what: 'a WebP image', bytes: [...ascii('RIFF'), -1, -1, -1, -1, ...ascii('WEBP')] },
  { what: 'a WAV audio file', bytes: [...ascii('RIFF'), -1, -1, -1, -1, ...ascii('WAVE')] },
  { what: 'a TIFF image', bytes: ascii('II*\0') },
  { what: 'a TIFF image', bytes: ascii('MM\0*') },
  { what: 'an icon', bytes: [0, 0, 1, 0] },
  { what: 'a PDF document', bytes: ascii('%PDF-') },
  { what: 'a ZIP archive (or an Office document, a JAR or an EPUB)', bytes: [0x50, 0x4b, 0x03, 0x04] },
  { what: 'a gzip archive', bytes: [0x1f, 0x8b, 0x08] },
  { what: 'a bzip2 archive', bytes: [...ascii('BZh'), -1, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59] },
  { what: 'an xz archive', bytes: [0xfd, ...ascii('7zXZ'), 0] },
  { what: 'a 7-Zip archive', bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c] },
  { what: 'a RAR archive', bytes: ascii('Rar!\x1a\x07') },
  { what: 'a tar archive', bytes: ascii('ustar\0'), at: 257 },
  { what: 'a tar archive', bytes: ascii('ustar  \0'), at: 257 },
  { what: 'a WebAssembly module', bytes: [0, ...ascii('asm')] },
  { what: 'a program (ELF)', bytes: [0x7f, ...ascii('ELF')] },
  { what: 'a program (Mach-O)', bytes: [0xcf, 0xfa, 0xed, 0xfe] },
  { what: 'a Java class file', bytes: [0xca, 0xfe, 0xba, 0xbe] },
  { what: 'an MP3 audio file', bytes: [...ascii('ID3'), -1, 0] },
  { what: 'an Ogg audio file', bytes: [...ascii('OggS'), 0] },
  { what: 'a FLAC audio file', bytes: [...ascii('fLaC'), -1, 0] },
  { what: 'an MP4 or QuickTime video', bytes: [0, 0, -1, -1, ...ascii('ftyp')] },
  { what: 'a Matroska or WebM video', bytes: [0x1a, 0x45, 0xdf, 0xa3] },
  { what: 'a SQLite database', bytes: ascii('SQLite format 3\0') },
];

/**
 * Of the first characters looked at, a larger share of control characters is not text (random or compressed bytes
 * have about 11 %, UTF-16 text 50 %, prose none), nor a larger share of bytes UTF-8 cannot decode (Latin-1 German or
 * French has a few per cent; compressed data about half).
 */
const MAX_CONTROL_SHARE = 0.05;
const MAX_UNDECODABLE_SHARE = 0.3;
const LOOK_AT = 64 * 1024;

/** A byte at `index` of the start of a decoded string: its code below 256, -2 for U+FFFD (a byte UTF-8 could not decode), else -3. */
function byteOfText(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (Number.isNaN(code)) return -4;
  if (code < 0x100) return code;
  return code === 0xfffd ? -2 : -3;
}

function matches(signature: Signature, byteAt: (index: number) => number): boolean {
  const at = signature.at ?? 0;
  const found = signature.bytes.every((expected, i) => {
    if (expected === -1) return byteAt(at + i) !== -4;
    const actual = byteAt(at + i);
    // Decoded as UTF-8, a byte above 0x7f of a binary signature became U+FFFD.
    return actual === expected || (actual === -2 && expected > 0x7f);
  });
  if (!found || !signature.binaryAfter) return found;
  const after = at + signature.bytes.length;
  for (let i = after; i < after + 8; i++) {
    const byte = byteAt(i);
    if (byte === -2 || byte === -3 || byte > 0x7f || (byte >= 0 && isControl(byte))) return true;
  }
  return false;
}

function isControl(code: number): boolean {
  return (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d && code !== 0x0c) || code === 0x7f;
}

/**
 * What the content looks like when it is not text ("a PNG image", "binary data"), or undefined for text. Bytes as
 * read from a file or a download; or a string already decoded (undecodable bytes are U+FFFD there).
 */
export function binaryKind(content: Uint8Array | string): string | undefined {
  const byteAt =
    typeof content === 'string'
      ? (index: number) => byteOfText(content, index)
      : (index: number) => (index < content.length ? (content[index] as number) : -4);
  for (const signature of SIGNATURES) if (matches(signature, byteAt)) return signature.what;
  // UTF-16 text (a Windows "Unicode" file) is text, whatever its NUL bytes.
  const first = [byteAt(0), byteAt(1)];
  if ((first[0] === 0xff && first[1] === 0xfe) || (first[0] === 0xfe && first[1] === 0xff)) return undefined;
  let looked = 0;
  let controls = 0;
  let undecodable = 0;
  if (typeof content === 'string') {
    const end = Math.min(content.length, LOOK_AT);
    for (let i = 0; i < end; i++) {
      const code = content.charCodeAt(i);
      if (isControl(code)) controls++;
      else if (code === 0xfffd) undecodable++;
    }
    looked = end;
  } else {
    const end = Math.min(content.length, LOOK_AT);
    let i = 0;
    while (i < end) {
      const byte = content[i] as number;
      const length = utf8Length(content, i);
      if (length === 0) {
        undecodable++;
        i++;
      } else {
        if (length === 1 && isControl(byte)) controls++;
        i += length;
      }
      looked++;
    }
  }
  if (looked >= 16 && (controls / looked > MAX_CONTROL_SHARE || undecodable / looked > MAX_UNDECODABLE_SHARE))
    return 'binary data';
  return undefined;
}

/** The length of the valid UTF-8 sequence at `i`, or 0 when the bytes there are not UTF-8. */
function utf8Length(bytes: Uint8Array, i: number): number {
  const first = bytes[i] as number;
  if (first < 0x80) return 1;
  const length = first >= 0xf0 && first <= 0xf4 ? 4 : first >= 0xe0 ? 3 : first >= 0xc2 && first < 0xe0 ? 2 : 0;
  if (length === 0 || i + length > bytes.length) return i + length > bytes.length && length > 0 ? length : 0;
  for (let k = 1; k < length; k++) if (((bytes[i + k] as number) & 0xc0) !== 0x80) return 0;
  return length;
}

/** "looks like a PNG image, not text" (after a name), or undefined for text. */
export function binaryProblem(content: Uint8Array | string): string | undefined {
  const kind = binaryKind(content);
  return kind ? `looks like ${kind}, not text` : undefined;
}

/**
 * Whether bytes are a PDF document (its signature, which the format lets follow up to 1024 bytes of anything): the
 * one binary format read aloud, by a PDF reader (src/speech/source/pdf-article.ts) rather than as text.
 */
export function isPdf(content: Uint8Array): boolean {
  const end = Math.min(content.length, 1024) - 5;
  for (let i = 0; i <= end; i++)
    if (
      content[i] === 0x25 &&
      content[i + 1] === 0x50 &&
      content[i + 2] === 0x44 &&
      content[i + 3] === 0x46 &&
      content[i + 4] === 0x2d
    )
      return true;
  return false;
}
