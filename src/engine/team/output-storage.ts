// Output storage of the team service: a folder every node mounts (`--storage DIR`) or S3-compatible object storage
// (`--storage s3://bucket/prefix`). Workers put each run's files under a key of their own (<job id>/<run token>), so
// a file is whole when the job's record names it, and a run that lost its lease can never overwrite the winner's.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, lstat, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type * as S3 from '@aws-sdk/client-s3';
import { isJobId } from '../core/job-id';
import { OUTPUT_NAME, restrict } from '../embedded/file-store';
import {
  type ByteRange,
  type OutputMeta,
  type OutputStorage,
  type StoredOutput,
  storedOutput,
} from '../core/job-store';

/** The team's output storage: the OutputStorage seam, plus what an API node needs to know of it. */
export interface TeamOutputStorage extends OutputStorage {
  /** Resolves when the storage answers (folder: it is one; S3: a one-key listing under the prefix); throws if not. */
  reachable(signal: AbortSignal): Promise<void>;
  /** The folder of `--storage DIR` (where free disk is measured); undefined for S3. */
  readonly folder: string | undefined;
}

const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

const KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}$/;

function keyOf(jobId: string, output: { name: string; key?: string }): string {
  const key = output.key ?? jobId;
  if (
    !isJobId(jobId) ||
    !OUTPUT_NAME.test(output.name) ||
    !KEY.test(key) ||
    key.split('/').includes('..') ||
    !key.startsWith(jobId)
  ) {
    throw new Error('Not an output of a job.');
  }
  return `${key}/${output.name}`;
}

/** Hash and flush a local file: the strong ETag of its content. */
async function describeFile(file: string): Promise<{ bytes: number; etag: string }> {
  const info = await lstat(file);
  if (!info.isFile()) throw new Error(`The output ${path.basename(file)} is not a regular file.`);
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return { bytes: info.size, etag: `"${hash.digest('base64url').slice(0, 27)}"` };
}

export class DirOutputStorage implements TeamOutputStorage {
  constructor(private readonly root: string) {}

  get folder(): string {
    return this.root;
  }

  async reachable(): Promise<void> {
    const info = await stat(this.root);
    if (!info.isDirectory()) throw Object.assign(new Error('The storage is not a folder.'), { code: 'ENOTDIR' });
  }

  async put(jobId: string, name: string, file: string, meta: OutputMeta): Promise<StoredOutput> {
    const target = path.join(this.root, keyOf(jobId, { name, ...(meta.key ? { key: meta.key } : {}) }));
    const { bytes, etag } = await describeFile(file);
    // Private to the service's user, as the embedded data dir: folders 0700, files 0600.
    await mkdir(path.dirname(target), { recursive: true, mode: PRIVATE_DIR });
    // Copied (the shared folder is usually another file system), flushed, then renamed into place.
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    await copyFile(file, temp);
    const handle = await open(temp, 'r+');
    try {
      await handle.chmod(PRIVATE_FILE);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
    return storedOutput(name, meta, bytes, etag);
  }

  read(jobId: string, output: StoredOutput, range?: ByteRange): Readable {
    return createReadStream(
      path.join(this.root, keyOf(jobId, output)),
      range ? { start: range.start, end: range.end } : {},
    );
  }

  async remove(jobId: string, key?: string): Promise<void> {
    if (
      !isJobId(jobId) ||
      (key !== undefined && (!KEY.test(key) || !key.startsWith(jobId) || key.split('/').includes('..')))
    )
      return;
    await rm(path.join(this.root, key ?? jobId), { recursive: true, force: true });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * S3 or any S3-compatible service, with the AWS SDK's usual configuration (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_REGION, profiles) and, for MinIO, Ceph, R2 and the like, an endpoint (AWS_ENDPOINT_URL_S3 or --s3-endpoint)
 * with path-style addresses. The SDK is loaded only here.
 */
export class S3OutputStorage implements TeamOutputStorage {
  readonly folder = undefined;

  private constructor(
    private readonly sdk: typeof S3,
    private readonly client: S3.S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
  ) {}

  static async open(url: string, endpoint: string | undefined): Promise<S3OutputStorage> {
    const parsed = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
    if (!parsed) throw new Error(`--storage ${url} is not an s3://bucket/prefix address.`);
    const sdk = await import('@aws-sdk/client-s3');
    const client = new sdk.S3Client({
      region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
      ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
      // Checksums only where S3 requires them: the SDK's default streams uploads as aws-chunked with trailing
      // checksums, which several S3-compatible servers store verbatim (chunk headers inside the file).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    const prefix = (parsed[2] ?? '').replace(/^\/+|\/+$/g, '');
    return new S3OutputStorage(sdk, client, parsed[1] as string, prefix === '' ? '' : `${prefix}/`);
  }

  async put(jobId: string, name: string, file: string, meta: OutputMeta): Promise<StoredOutput> {
    const key = this.prefix + keyOf(jobId, { name, ...(meta.key ? { key: meta.key } : {}) });
    const { bytes, etag } = await describeFile(file);
    // One PUT: S3 makes an object visible whole or not at all.
    await this.client.send(
      new this.sdk.PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: createReadStream(file),
        ContentLength: bytes,
        ContentType: meta.contentType,
      }),
    );
    return storedOutput(name, meta, bytes, etag);
  }

  async reachable(signal: AbortSignal): Promise<void> {
    // The permission the workers need anyway (remove lists), and no object is read.
    await this.client.send(
      new this.sdk.ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, MaxKeys: 1 }),
      { abortSignal: signal },
    );
  }

  read(jobId: string, output: StoredOutput, range?: ByteRange): Readable {
    const out = new PassThrough();
    const key = this.prefix + keyOf(jobId, output);
    this.client
      .send(
        new this.sdk.GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      )
      .then((response) => {
        const body = response.Body as Readable | undefined;
        if (!body) throw new Error(`The object store returned no body for ${key}.`);
        out.emit('ready');
        body.on('error', (error) => out.destroy(error));
        out.on('close', () => body.destroy());
        body.pipe(out);
      })
      .catch((error: unknown) => out.destroy(error instanceof Error ? error : new Error(String(error))));
    return out;
  }

  async remove(jobId: string, key?: string): Promise<void> {
    if (!isJobId(jobId)) return;
    const prefix = `${this.prefix}${key ?? jobId}/`;
    let token: string | undefined;
    do {
      const listed = await this.client.send(
        new this.sdk.ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      const keys = (listed.Contents ?? []).map((o) => o.Key).filter((k): k is string => typeof k === 'string');
      for (const k of keys) await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: k }));
      token = listed.IsTruncated ? listed.NextContinuationToken : undefined;
    } while (token);
  }

  close(): Promise<void> {
    this.client.destroy();
    return Promise.resolve();
  }
}

export async function openOutputStorage(spec: string, endpoint?: string): Promise<TeamOutputStorage> {
  if (spec.startsWith('s3://')) return S3OutputStorage.open(spec, endpoint);
  if (!path.isAbsolute(spec))
    throw new Error(`--storage must be an absolute folder or s3://bucket/prefix, not "${spec}".`);
  await mkdir(spec, { recursive: true, mode: PRIVATE_DIR });
  await restrict(spec);
  return new DirOutputStorage(spec);
}
