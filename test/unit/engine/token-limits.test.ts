// Per-token limits on their own: the submission rate (a token bucket per token) and the bytes of finished files a
// token keeps, each a 429 with a Retry-After that says when a submission will be accepted again.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../../src/engine/http/api-error';
import { TokenLimits } from '../../../src/engine/http/token-limits';

async function refusal(limits: TokenLimits, owner: string): Promise<ApiError | undefined> {
  try {
    await limits.admit(owner);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof ApiError, String(error));
    return error;
  }
}

describe('engine: per-token limits', () => {
  it('lets a token submit its rate at once, then refuses it (and only it) with Retry-After', async () => {
    const limits = new TokenLimits({ submitRatePerMinute: 5, storageBytes: 0, minFreeDiskBytes: 0 });
    for (let i = 0; i < 5; i++) assert.equal(await refusal(limits, 'a'), undefined);
    const refused = await refusal(limits, 'a');
    assert.equal(refused?.status, 429);
    assert.equal(refused?.entries[0]?.code, 'rate_limited');
    // One submission comes back every 12 s at 5 a minute.
    assert.ok(Number(refused?.headers['Retry-After']) >= 1 && Number(refused?.headers['Retry-After']) <= 12);
    assert.equal(await refusal(limits, 'b'), undefined, 'another token has its own rate');
  });

  it('refuses a token that keeps more finished files than its quota until they expire', async () => {
    const limits = new TokenLimits({
      submitRatePerMinute: 0,
      storageBytes: 10 * 1024 * 1024,
      minFreeDiskBytes: 0,
      storageOf: (owner) =>
        owner === 'heavy'
          ? { bytes: 11 * 1024 * 1024, firstExpiryMs: 90_500 }
          : { bytes: 1024, firstExpiryMs: undefined },
    });
    const refused = await refusal(limits, 'heavy');
    assert.equal(refused?.status, 429);
    assert.equal(refused?.entries[0]?.code, 'storage_quota_exceeded');
    assert.match(refused?.entries[0]?.message ?? '', /keeps 11 MB of finished files, its limit is 10 MB/);
    assert.equal(refused?.headers['Retry-After'], '91');
    assert.equal(await refusal(limits, 'light'), undefined);
  });
});
