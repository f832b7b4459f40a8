// What one client (one token) may use of a shared engine, checked before a submission is stored: a rate of
// submissions, the bytes of finished files it keeps, and the free space the data dir's disk must keep for everyone.
// (Its share of the queue is Intake's (embedded/intake.ts), which knows what waits.)
import { statfs } from 'node:fs/promises';
import type { OwnerId } from '../core/auth';
import { ApiError } from './api-error';

export interface TokenLimitOptions {
  /** Submissions per minute per token; 0: none. */
  submitRatePerMinute: number;
  /** Bytes of output files one token may keep; 0: no limit. */
  storageBytes: number;
  /** Free bytes the data dir's disk must keep. */
  minFreeDiskBytes: number;
  /** Where the disk's free space is measured; without it, it is not. */
  dataDir?: string;
  /** Bytes a token keeps and when its first job with files expires; without it, storage is not limited. */
  storageOf?(owner: OwnerId): { bytes: number; firstExpiryMs: number | undefined };
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const MB = 1024 * 1024;

export class TokenLimits {
  /** One bucket per token that submitted (tokens are configured, so this stays as small as their list). */
  private readonly buckets = new Map<OwnerId, Bucket>();
  private disk: { checkedAt: number; free: number } | undefined;

  constructor(private readonly options: TokenLimitOptions) {}

  /** Throws a 429 or 507 ApiError when this token may not submit now; takes one submission from its rate. */
  async admit(owner: OwnerId): Promise<void> {
    this.checkRate(owner);
    this.checkStorage(owner);
    await this.checkDisk();
  }

  private checkRate(owner: OwnerId): void {
    const rate = this.options.submitRatePerMinute;
    if (rate <= 0) return;
    // A token bucket: up to `rate` at once, refilled at `rate` per minute.
    const now = Date.now();
    const bucket = this.buckets.get(owner) ?? { tokens: rate, updatedAt: now };
    bucket.tokens = Math.min(rate, bucket.tokens + ((now - bucket.updatedAt) * rate) / 60_000);
    bucket.updatedAt = now;
    this.buckets.set(owner, bucket);
    if (bucket.tokens < 1) {
      const retryAfterS = Math.max(1, Math.ceil(((1 - bucket.tokens) * 60) / rate));
      throw ApiError.of(
        429,
        'rate_limited',
        `Too many submissions with this token: at most ${rate} a minute. Try again in ${retryAfterS} s.`,
        {
          'Retry-After': String(retryAfterS),
        },
      );
    }
    bucket.tokens -= 1;
  }

  private checkStorage(owner: OwnerId): void {
    const limit = this.options.storageBytes;
    if (limit <= 0 || !this.options.storageOf) return;
    const { bytes, firstExpiryMs } = this.options.storageOf(owner);
    if (bytes < limit) return;
    const retryAfterS = Math.max(1, Math.ceil((firstExpiryMs ?? 60_000) / 1000));
    throw ApiError.of(
      429,
      'storage_quota_exceeded',
      `This token keeps ${Math.round(bytes / MB)} MB of finished files, its limit is ${Math.round(limit / MB)} MB. Space frees up as old jobs expire, the first in ${retryAfterS} s.`,
      { 'Retry-After': String(retryAfterS) },
    );
  }

  private async checkDisk(): Promise<void> {
    const minimum = this.options.minFreeDiskBytes;
    if (minimum <= 0 || this.options.dataDir === undefined) return;
    // statfs costs a system call; once a second is plenty for a limit measured in megabytes.
    if (!this.disk || Date.now() - this.disk.checkedAt > 1000) {
      try {
        const info = await statfs(this.options.dataDir);
        this.disk = { checkedAt: Date.now(), free: info.bavail * info.bsize };
      } catch {
        // A data dir that cannot be measured (deleted: the store makes it again) is not refused here.
        return;
      }
    }
    if (this.disk.free < minimum) {
      throw ApiError.of(
        507,
        'insufficient_storage',
        `The engine's disk has ${Math.round(this.disk.free / MB)} MB free; it keeps at least ${Math.round(minimum / MB)} MB free for the jobs it runs. Free disk space (or lower --min-free-disk-mb), then submit again.`,
        { 'Retry-After': '60' },
      );
    }
  }
}
