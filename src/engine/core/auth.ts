// Bearer tokens. A token is never stored or logged: jobs record the SHA-256 of the token that created them (the
// owner), and a presented token is compared with every configured one in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';

export type OwnerId = string;

export class TokenRing {
  private readonly digests: Buffer[];
  private readonly revokedListeners = new Set<(owner: OwnerId) => void>();

  constructor(tokens: readonly string[]) {
    const usable = tokens.map((t) => t.trim()).filter((t) => t.length > 0);
    if (usable.length === 0) throw new Error('No API tokens configured: the engine would accept no request.');
    this.digests = usable.map(digest);
  }

  /** How many tokens are configured (owners that share the engine). */
  get size(): number {
    return this.digests.length;
  }

  /** The owner id for an `Authorization` header value, or undefined when it names no configured token. */
  ownerOf(authorization: string | undefined): OwnerId | undefined {
    const token = bearerToken(authorization);
    if (token === undefined) return undefined;
    const presented = digest(token);
    let match: Buffer | undefined;
    // Every configured token is compared, so timing does not reveal which one (or whether any) matched.
    for (const candidate of this.digests) {
      if (timingSafeEqual(candidate, presented)) match = candidate;
    }
    return match?.toString('hex');
  }

  /** Whether the owner's token may use the admin endpoints (team tokens made with --admin; never a configured one). */
  isAdmin(_owner: OwnerId): boolean {
    return false;
  }

  /**
   * Calls `listener` with the owner of every token removed from now on (team tokens kept in the database), so that
   * what was opened with it (event streams) can end. Returns the function that stops listening.
   */
  onRevoked(listener: (owner: OwnerId) => void): () => void {
    this.revokedListeners.add(listener);
    return () => this.revokedListeners.delete(listener);
  }

  protected revoked(owner: OwnerId): void {
    for (const listener of this.revokedListeners) listener(owner);
  }
}

/** The owner id a token maps to (for callers that hold the token, such as an in-process client). */
export function ownerIdOf(token: string): OwnerId {
  return digest(token.trim()).toString('hex');
}

function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  return match?.[1];
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
