// API tokens of a team service: those of ARTICLE_AUDIO_TOKENS / --tokens-file as for `serve`, plus tokens kept in
// the database with a name per user (`article-audio token add NAME`). The database holds only each token's SHA-256,
// which is also the owner id of the jobs it creates, so a token works the same on every API node and never appears
// in the database, the logs or an answer. Every node re-reads the table every few seconds.
import { createHash, randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { TokenRing } from '../core/auth';
import type { Logger } from '../core/logger';

/** How often every node re-reads the tokens table: a removed token is refused, and its streams end, within this. */
export const TOKEN_REFRESH_MS = 3000;

export class TeamTokens extends TokenRing {
  private names = new Map<string, string>();
  private admins = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    tokens: readonly string[],
    private readonly pool: Pool,
    private readonly log: Logger,
  ) {
    super(tokens);
  }

  async start(refreshMs = TOKEN_REFRESH_MS): Promise<void> {
    await this.refresh();
    this.timer = setInterval(
      () =>
        void this.refresh().catch((error: unknown) =>
          this.log('warn', `Could not read the tokens table: ${String(error)}`),
        ),
      refreshMs,
    );
    this.timer.unref();
  }

  private async refresh(): Promise<void> {
    const rows = await this.pool.query<{ name: string; token_sha256: string; admin: boolean }>(
      'SELECT name, token_sha256, admin FROM aa_tokens',
    );
    const before = this.names;
    this.names = new Map(rows.rows.map((r) => [r.token_sha256, r.name]));
    this.admins = new Set(rows.rows.filter((r) => r.admin).map((r) => r.token_sha256));
    for (const owner of before.keys()) if (!this.names.has(owner)) this.revoked(owner);
  }

  get databaseTokens(): number {
    return this.names.size;
  }

  override ownerOf(authorization: string | undefined): string | undefined {
    const configured = super.ownerOf(authorization);
    if (configured !== undefined) return configured;
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    if (!match?.[1]) return undefined;
    // A lookup by digest: the table holds digests only, so timing can tell nothing about a token.
    const digest = createHash('sha256').update(match[1], 'utf8').digest('hex');
    return this.names.has(digest) ? digest : undefined;
  }

  /** Only database tokens made with --admin; re-read with the table, so a removed one stops at once too. */
  override isAdmin(owner: string): boolean {
    return this.admins.has(owner);
  }

  /** The user's name for logs, when the owner is a database token. */
  nameOf(owner: string): string | undefined {
    return this.names.get(owner);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

/** A token nobody knows, for API nodes whose users are all in the database (TokenRing wants at least one). */
export function unusableToken(): string {
  return randomBytes(32).toString('hex');
}

/**
 * `article-audio token add|list|remove`: prints a new token once; the database keeps only its digest. `admin`: the
 * new token may also use the admin endpoints (GET /v1/admin/workers).
 */
export async function manageTokens(
  pool: Pool,
  action: string,
  name: string | undefined,
  out: (line: string) => void,
  options: { admin?: boolean } = {},
): Promise<void> {
  if (options.admin && action !== 'add')
    throw new Error('--admin goes with add: article-audio token add NAME --admin.');
  if (action === 'list') {
    const rows = await pool.query<{ name: string; created_at: Date; admin: boolean }>(
      'SELECT name, created_at, admin FROM aa_tokens ORDER BY name',
    );
    for (const row of rows.rows) out(`${row.name}\t${row.created_at.toISOString()}${row.admin ? '\tadmin' : ''}`);
    if (rows.rowCount === 0) out('No tokens in the database.');
    return;
  }
  if (!name || !/^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/.test(name))
    throw new Error('Give the user a name of letters, digits and . _ @ - (at most 100).');
  if (action === 'add') {
    const token = randomBytes(24).toString('base64url');
    const digest = createHash('sha256').update(token, 'utf8').digest('hex');
    const inserted = await pool.query(
      'INSERT INTO aa_tokens (name, token_sha256, admin) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
      [name, digest, options.admin === true],
    );
    if (inserted.rowCount === 0)
      throw new Error(`There is a token named ${name} already; remove it first to replace it.`);
    out(token);
    return;
  }
  if (action === 'remove') {
    const removed = await pool.query('DELETE FROM aa_tokens WHERE name = $1', [name]);
    if (removed.rowCount === 0) throw new Error(`No token is named ${name}.`);
    out(
      `Removed ${name}; API nodes refuse it and end its open streams within ${TOKEN_REFRESH_MS / 1000} s. Its jobs stay until they expire.`,
    );
    return;
  }
  throw new Error(`Unknown token action "${action}": add, list or remove.`);
}
