// Streams mono PCM into an MP3 file as it is produced (LAME in WebAssembly through mediabunny), so memory stays
// flat however long the article. The encoder patches its Xing header at the start of the file when it finishes,
// which gives players the exact duration.
import { open, type FileHandle } from 'node:fs/promises';
import { AudioSample, AudioSampleSource, Mp3OutputFormat, Output, StreamTarget } from 'mediabunny';
import { registerMp3Encoder } from '@mediabunny/mp3-encoder';

let registered = false;

/** Writes sequential chunks through one buffer; a chunk elsewhere (the header patch) flushes and writes in place. */
class PositionedFile {
  private buffer = Buffer.alloc(256 * 1024);
  private used = 0;
  private bufferStart = 0;
  bytes = 0;

  constructor(private readonly handle: FileHandle) {}

  async write(data: Uint8Array, position: number): Promise<void> {
    if (position === this.bufferStart + this.used && this.used + data.length <= this.buffer.length) {
      this.buffer.set(data, this.used);
      this.used += data.length;
    } else {
      await this.flush();
      if (data.length > this.buffer.length) {
        await this.handle.write(data, 0, data.length, position);
        this.bufferStart = position + data.length;
      } else {
        this.bufferStart = position;
        this.buffer.set(data, 0);
        this.used = data.length;
      }
    }
    this.bytes = Math.max(this.bytes, position + data.length);
  }

  async flush(): Promise<void> {
    if (this.used > 0) await this.handle.write(this.buffer, 0, this.used, this.bufferStart);
    this.bufferStart += this.used;
    this.used = 0;
  }
}

export class Mp3Writer {
  private samplesWritten = 0;

  private constructor(
    private readonly handle: FileHandle,
    private readonly file: PositionedFile,
    private readonly output: Output,
    private readonly source: AudioSampleSource,
    readonly sampleRate: number,
  ) {}

  /** `onEncoded` sees every chunk as it is written (encoded frames, in order, and the header patch at the end). */
  static async create(
    path: string,
    sampleRate: number,
    bitrate: number,
    onEncoded?: (data: Uint8Array, position: number) => void,
  ): Promise<Mp3Writer> {
    if (!registered) {
      registerMp3Encoder();
      registered = true;
    }
    const handle = await open(path, 'w');
    const file = new PositionedFile(handle);
    const target = new StreamTarget(
      new WritableStream<{ type: 'write'; data: Uint8Array; position: number }>({
        write: (chunk) => {
          onEncoded?.(chunk.data, chunk.position);
          return file.write(chunk.data, chunk.position);
        },
      }),
    );
    const output = new Output({ format: new Mp3OutputFormat(), target });
    const source = new AudioSampleSource({ codec: 'mp3', bitrate });
    output.addAudioTrack(source);
    try {
      await output.start();
    } catch (error) {
      await handle.close();
      throw error;
    }
    return new Mp3Writer(handle, file, output, source, sampleRate);
  }

  /** Seconds of audio written so far. */
  get durationS(): number {
    return this.samplesWritten / this.sampleRate;
  }

  async write(samples: Float32Array): Promise<void> {
    if (samples.length === 0) return;
    const sample = new AudioSample({
      data: samples,
      format: 'f32',
      numberOfChannels: 1,
      sampleRate: this.sampleRate,
      timestamp: this.samplesWritten / this.sampleRate,
    });
    try {
      await this.source.add(sample);
    } finally {
      sample.close();
    }
    this.samplesWritten += samples.length;
  }

  /** Finishes the file; returns its size in bytes. */
  async finish(): Promise<number> {
    try {
      await this.output.finalize();
      await this.file.flush();
      await this.handle.sync();
      return this.file.bytes;
    } finally {
      await this.handle.close();
    }
  }

  /** Stops without finishing (cancelled or failed job); the caller removes the file. */
  async abort(): Promise<void> {
    await this.output.cancel().catch(() => {});
    await this.handle.close().catch(() => {});
  }
}
