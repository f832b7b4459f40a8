// The WASI system calls Flite makes, served from memory: its input text, lexicon addendum and output WAV are files in
// one directory that exists only in this object, and its standard output (-psdur) and error are buffers.
//
// node:wasi opened the preopened scratch directory on the host for every WASI object and closed it only when V8
// collected the object, which in a synthesis worker (little garbage: the memory is imported and reused) was almost
// never: one descriptor per utterance leaked until the engine hit its limit (EMFILE, issue 23). Here no host file,
// directory or descriptor is involved at all, and nothing is written to disk per utterance.
//
// Only the imports the Flite module has are implemented (flite-module.test.ts checks the module asks for no other);
// anything Flite does beyond them (a path outside the directory, a second directory) fails with an errno, as on a host
// that does not have it.

const ERRNO_SUCCESS = 0;
const ERRNO_BADF = 8;
const ERRNO_EXIST = 20;
const ERRNO_INVAL = 28;
const ERRNO_ISDIR = 31;
const ERRNO_NOENT = 44;
const ERRNO_NOTDIR = 54;
const ERRNO_PERM = 63;
const ERRNO_SPIPE = 70;
const ERRNO_NOTCAPABLE = 76;

const FILETYPE_CHARACTER_DEVICE = 2;
const FILETYPE_DIRECTORY = 3;
const FILETYPE_REGULAR_FILE = 4;

const OFLAGS_CREAT = 1;
const OFLAGS_DIRECTORY = 2;
const OFLAGS_EXCL = 4;
const OFLAGS_TRUNC = 8;
const FDFLAGS_APPEND = 1;

/** The one directory Flite sees, at this path. */
export const WASI_DIR = '/work';
const DIR_FD = 3;

/**
 * A file's bytes: a buffer that grows by half again when a write passes its end (amortized linear, however small
 * Flite's writes are) and is kept from run to run, so a worker's WAV buffer is allocated once, not per utterance.
 */
export class MemoryFile {
  bytes: Uint8Array;
  size: number;

  constructor(
    content: Uint8Array = new Uint8Array(0),
    readonly writable = true,
  ) {
    this.bytes = content;
    this.size = content.length;
  }

  /** The file's content (a view of the buffer: valid until the next run writes to the file). */
  content(): Uint8Array {
    return this.bytes.subarray(0, this.size);
  }

  truncate(): void {
    this.size = 0;
  }

  write(data: Uint8Array, at: number): void {
    const end = at + data.length;
    if (end > this.bytes.length) {
      const grown = new Uint8Array(Math.max(end, Math.ceil(this.bytes.length * 1.5), 4096));
      grown.set(this.bytes.subarray(0, this.size));
      this.bytes = grown;
    }
    // A write past the end leaves a hole of zeros (the buffer may hold an earlier run's bytes there).
    if (at > this.size) this.bytes.fill(0, this.size, at);
    this.bytes.set(data, at);
    if (end > this.size) this.size = end;
  }
}

/** A character device that keeps what is written to it (standard output and error). */
class Sink {
  private readonly parts: Uint8Array[] = [];
  write(data: Uint8Array): void {
    this.parts.push(data.slice());
  }
  text(): string {
    return Buffer.concat(this.parts).toString('utf8');
  }
}

interface OpenFile {
  kind: 'file';
  file: MemoryFile;
  position: number;
  append: boolean;
}
interface OpenSink {
  kind: 'sink';
  sink: Sink;
}
interface OpenDir {
  kind: 'dir';
}
type Descriptor = OpenFile | OpenSink | OpenDir | { kind: 'empty' };

/** Thrown by proc_exit to stop the program; `start` turns it into the exit code. */
class ProcExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export interface WasiMemory {
  readonly buffer: ArrayBuffer;
}

/** One run of a WASI program (a WASI program runs once): its arguments, its files and its output. */
export class MemoryWasi {
  private readonly descriptors: (Descriptor | undefined)[];
  readonly stdout = new Sink();
  readonly stderr = new Sink();
  private readonly encodedArgs: Uint8Array[];

  /**
   * `files` are the directory's entries by name (shared with the caller: a file the program creates is added to it);
   * `memory` is the instance's memory (imported, so known before instantiation).
   */
  constructor(
    args: string[],
    private readonly files: Map<string, MemoryFile>,
    private readonly memory: WasiMemory,
  ) {
    this.encodedArgs = args.map((arg) => Buffer.from(`${arg}\0`, 'utf8'));
    this.descriptors = [
      { kind: 'empty' },
      { kind: 'sink', sink: this.stdout },
      { kind: 'sink', sink: this.stderr },
      { kind: 'dir' },
    ];
  }

  /** Runs the instance's `_start`; returns the exit code. */
  start(instance: WebAssembly.Instance): number {
    try {
      (instance.exports._start as () => void)();
      return 0;
    } catch (error) {
      if (error instanceof ProcExit) return error.code;
      throw error;
    }
  }

  private view(): DataView {
    return new DataView(this.memory.buffer);
  }

  private bytes(): Uint8Array {
    return new Uint8Array(this.memory.buffer);
  }

  /** The byte ranges of an iovec array: {buf: u32, len: u32} each. */
  private iovecs(pointer: number, count: number): Uint8Array[] {
    const view = this.view();
    const bytes = this.bytes();
    const out: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      const buf = view.getUint32(pointer + i * 8, true);
      const len = view.getUint32(pointer + i * 8 + 4, true);
      out.push(bytes.subarray(buf, buf + len));
    }
    return out;
  }

  private open(fd: number, path: string, oflags: number, fdflags: number): number | Descriptor {
    if (this.descriptors[fd]?.kind !== 'dir') return ERRNO_BADF;
    const name = path.replace(/^(\.\/)+/, '');
    if (name === '' || name === '.') return oflags & OFLAGS_DIRECTORY ? { kind: 'dir' } : ERRNO_ISDIR;
    if (name.includes('/') || name === '..') return ERRNO_NOTCAPABLE;
    let file = this.files.get(name);
    if (file && oflags & OFLAGS_CREAT && oflags & OFLAGS_EXCL) return ERRNO_EXIST;
    if (oflags & OFLAGS_DIRECTORY) return file ? ERRNO_NOTDIR : ERRNO_NOENT;
    if (!file) {
      if (!(oflags & OFLAGS_CREAT)) return ERRNO_NOENT;
      file = new MemoryFile();
      this.files.set(name, file);
    }
    if (oflags & OFLAGS_TRUNC) {
      if (!file.writable) return ERRNO_PERM;
      file.truncate();
    }
    return { kind: 'file', file, position: 0, append: Boolean(fdflags & FDFLAGS_APPEND) };
  }

  /** The import object's `wasi_snapshot_preview1`: the calls Flite makes. */
  imports(): Record<string, (...args: never[]) => number> {
    const self = this; // eslint-disable-line @typescript-eslint/no-this-alias -- the calls are plain functions
    return {
      args_sizes_get(argcPointer: number, sizePointer: number): number {
        const view = self.view();
        view.setUint32(argcPointer, self.encodedArgs.length, true);
        view.setUint32(
          sizePointer,
          self.encodedArgs.reduce((sum, arg) => sum + arg.length, 0),
          true,
        );
        return ERRNO_SUCCESS;
      },
      args_get(argvPointer: number, bufferPointer: number): number {
        const view = self.view();
        const bytes = self.bytes();
        let at = bufferPointer;
        self.encodedArgs.forEach((arg, i) => {
          view.setUint32(argvPointer + i * 4, at, true);
          bytes.set(arg, at);
          at += arg.length;
        });
        return ERRNO_SUCCESS;
      },
      clock_time_get(id: number, _precision: bigint, timePointer: number): number {
        // 0 realtime, 1 monotonic, 2/3 process and thread CPU time (the time since the thread started will do).
        const nanoseconds = id === 0 ? BigInt(Date.now()) * 1_000_000n : BigInt(Math.round(performance.now() * 1e6));
        self.view().setBigUint64(timePointer, nanoseconds, true);
        return ERRNO_SUCCESS;
      },
      fd_close(fd: number): number {
        if (!self.descriptors[fd]) return ERRNO_BADF;
        self.descriptors[fd] = undefined;
        return ERRNO_SUCCESS;
      },
      fd_fdstat_get(fd: number, pointer: number): number {
        const descriptor = self.descriptors[fd];
        if (!descriptor || descriptor.kind === 'empty') return ERRNO_BADF;
        const view = self.view();
        const type =
          descriptor.kind === 'dir'
            ? FILETYPE_DIRECTORY
            : descriptor.kind === 'file'
              ? FILETYPE_REGULAR_FILE
              : FILETYPE_CHARACTER_DEVICE;
        view.setUint8(pointer, type);
        view.setUint16(pointer + 2, descriptor.kind === 'file' && descriptor.append ? FDFLAGS_APPEND : 0, true);
        // Every right: what a descriptor may not do, the call itself refuses.
        view.setBigUint64(pointer + 8, 0x1fffffffn, true);
        view.setBigUint64(pointer + 16, 0x1fffffffn, true);
        return ERRNO_SUCCESS;
      },
      fd_fdstat_set_flags(fd: number, flags: number): number {
        const descriptor = self.descriptors[fd];
        if (!descriptor || descriptor.kind === 'empty') return ERRNO_BADF;
        if (descriptor.kind === 'file') descriptor.append = Boolean(flags & FDFLAGS_APPEND);
        return ERRNO_SUCCESS;
      },
      fd_prestat_get(fd: number, pointer: number): number {
        if (fd !== DIR_FD) return ERRNO_BADF;
        const view = self.view();
        view.setUint8(pointer, 0);
        view.setUint32(pointer + 4, Buffer.byteLength(WASI_DIR), true);
        return ERRNO_SUCCESS;
      },
      fd_prestat_dir_name(fd: number, pointer: number, length: number): number {
        if (fd !== DIR_FD) return ERRNO_BADF;
        const name = Buffer.from(WASI_DIR, 'utf8');
        if (length < name.length) return ERRNO_INVAL;
        self.bytes().set(name, pointer);
        return ERRNO_SUCCESS;
      },
      fd_read(fd: number, iovs: number, count: number, readPointer: number): number {
        const descriptor = self.descriptors[fd];
        if (!descriptor) return ERRNO_BADF;
        let read = 0;
        if (descriptor.kind === 'file') {
          for (const target of self.iovecs(iovs, count)) {
            const available = descriptor.file.size - descriptor.position;
            const n = Math.max(0, Math.min(target.length, available));
            target.set(descriptor.file.bytes.subarray(descriptor.position, descriptor.position + n));
            descriptor.position += n;
            read += n;
            if (n < target.length) break;
          }
        } else if (descriptor.kind !== 'empty') return ERRNO_BADF;
        self.view().setUint32(readPointer, read, true);
        return ERRNO_SUCCESS;
      },
      fd_seek(fd: number, offset: bigint, whence: number, resultPointer: number): number {
        const descriptor = self.descriptors[fd];
        if (!descriptor) return ERRNO_BADF;
        if (descriptor.kind !== 'file') return ERRNO_SPIPE;
        const base = whence === 0 ? 0 : whence === 1 ? descriptor.position : whence === 2 ? descriptor.file.size : NaN;
        const position = base + Number(offset);
        if (!Number.isSafeInteger(position) || position < 0) return ERRNO_INVAL;
        descriptor.position = position;
        self.view().setBigUint64(resultPointer, BigInt(position), true);
        return ERRNO_SUCCESS;
      },
      fd_write(fd: number, iovs: number, count: number, writtenPointer: number): number {
        const descriptor = self.descriptors[fd];
        if (!descriptor || descriptor.kind === 'dir' || descriptor.kind === 'empty') return ERRNO_BADF;
        let written = 0;
        for (const data of self.iovecs(iovs, count)) {
          if (descriptor.kind === 'sink') descriptor.sink.write(data);
          else {
            if (!descriptor.file.writable) return ERRNO_BADF;
            if (descriptor.append) descriptor.position = descriptor.file.size;
            descriptor.file.write(data, descriptor.position);
            descriptor.position += data.length;
          }
          written += data.length;
        }
        self.view().setUint32(writtenPointer, written, true);
        return ERRNO_SUCCESS;
      },
      path_open(
        fd: number,
        _dirflags: number,
        pathPointer: number,
        pathLength: number,
        oflags: number,
        _rightsBase: bigint,
        _rightsInheriting: bigint,
        fdflags: number,
        fdPointer: number,
      ): number {
        const path = Buffer.from(self.bytes().subarray(pathPointer, pathPointer + pathLength)).toString('utf8');
        const opened = self.open(fd, path, oflags, fdflags);
        if (typeof opened === 'number') return opened;
        let slot = self.descriptors.indexOf(undefined, DIR_FD + 1);
        if (slot < 0) slot = self.descriptors.length;
        self.descriptors[slot] = opened;
        self.view().setUint32(fdPointer, slot, true);
        return ERRNO_SUCCESS;
      },
      proc_exit(code: number): number {
        throw new ProcExit(code);
      },
    };
  }
}
