// The engine's HTTP conformance tests (test/engine/jobs.test.ts: every endpoint, every state, streams, replay,
// cancel, idempotency, per-token visibility, the queue limit, outputs with ETag and Range) run again here against
// the team service: an API node and a real speech worker over Postgres (test/team/team-engine.ts).
import { after } from 'node:test';
import { stopTeamPostgres } from './team-engine';

process.env.ARTICLE_AUDIO_TEST_ENGINE = 'postgres';
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../engine/jobs.test');

after(() => stopTeamPostgres());
