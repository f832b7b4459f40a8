// Per-token limits of the team service hold across API nodes: the unfinished jobs of a token and its submissions of
// the last minute are counted in Postgres, so a client that spreads its submissions over two nodes (as a load
// balancer does) gets no more than one node would give it. No worker runs here, so accepted jobs stay queued until
// the test cancels them.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Answer, type ServiceCalls, articleText, serviceCalls } from '../support/http-calls';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const mini = 'article-audio-1-mini';

function assertLimited(answer: Answer, code: string): void {
  assert.equal(answer.status, 429, answer.text);
  assert.match(answer.headers.get('retry-after') ?? '', /^[1-9]\d*$/, 'Retry-After in whole seconds');
  const retryAfter = Number(answer.headers.get('retry-after'));
  assert.ok(retryAfter <= 60, `Retry-After ${retryAfter} s`);
  // The error envelope every other error uses: no data, one entry with a code and a message a person can act on.
  assert.deepEqual(Object.keys(answer.body as object).sort(), ['data', 'errors']);
  assert.equal((answer.body as { data: unknown }).data, null);
  assert.equal(answer.errors.length, 1);
  assert.equal(answer.errors[0]?.code, code);
  assert.match(answer.errors[0]?.message ?? '', /try again in \d+ s/i);
}

describe('team service: per-token limits across two API nodes', () => {
  let postgres: TestPostgres;
  let cluster: Cluster;
  let a: ServiceCalls;
  let b: ServiceCalls;
  let otherOnB: ServiceCalls;

  before(async () => {
    postgres = await startPostgres();
    cluster = await startCluster({
      serverUrl: postgres.url,
      apiArgs: ['--token-max-jobs', '3', '--token-submit-rate', '5'],
    });
    await Promise.all([cluster.startApi(), cluster.startApi()]);
    const [nodeA, nodeB] = cluster.apis;
    a = serviceCalls(nodeA?.url ?? '', cluster.tokens[0] as string);
    b = serviceCalls(nodeB?.url ?? '', cluster.tokens[0] as string);
    otherOnB = serviceCalls(nodeB?.url ?? '', cluster.tokens[1] as string);
  });
  after(async () => {
    await cluster?.dispose();
    await postgres?.stop();
  });

  it('admits at most --token-max-jobs unfinished jobs of a token over both nodes, then --token-submit-rate a minute', async () => {
    // Eight submissions at once, alternating between the nodes: exactly three may win.
    const burst = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).submit({ model_id: mini, text: articleText() })),
    );
    const accepted = burst.filter((r) => r.status === 202).map((r) => r.jobId);
    assert.equal(accepted.length, 3, burst.map((r) => `${r.status} ${r.text}`).join('\n'));
    for (const refused of burst.filter((r) => r.status !== 202)) assertLimited(refused, 'too_many_jobs');
    const open = await cluster.query<{ n: string }>(
      "SELECT count(*) AS n FROM aa_jobs WHERE owner = (SELECT owner FROM aa_jobs WHERE id = $1) AND status = 'queued'",
      [accepted[0]],
    );
    assert.equal(Number(open[0]?.n), 3, 'three jobs stored, no more');

    // Another token is not held back by this one.
    assert.equal((await otherOnB.submit({ model_id: mini, text: articleText() })).status, 202);

    // A finished (here: cancelled) job frees a place, on either node.
    assert.equal((await b.post(`/v1/jobs/${accepted[0]}/cancel`)).status, 200);
    const fourth = await a.submit({ model_id: mini, text: articleText() });
    assert.equal(fourth.status, 202, fourth.text);
    assertLimited(await b.submit({ model_id: mini, text: articleText() }), 'too_many_jobs');

    // Five accepted within the minute is the rate: a sixth is refused even with a free place.
    assert.equal((await a.post(`/v1/jobs/${accepted[1]}/cancel`)).status, 200);
    assert.equal((await b.submit({ model_id: mini, text: articleText() })).status, 202);
    assert.equal((await b.post(`/v1/jobs/${accepted[2]}/cancel`)).status, 200);
    const sixth = await a.submit({ model_id: mini, text: articleText() });
    assertLimited(sixth, 'rate_limited');
    assert.match(sixth.errors[0]?.message ?? '', /at most 5 a minute/);
    // The same answer from the other node: the count is the database's, not the node's.
    assertLimited(await b.submit({ model_id: mini, text: articleText() }), 'rate_limited');

    // An idempotent replay of an accepted submission is not a new job and is answered even at the limit.
    const keyed = await otherOnB.submit({ model_id: mini, text: articleText() }, { 'idempotency-key': 'k1' });
    assert.equal(keyed.status, 202);
    assert.equal((await otherOnB.submit({ model_id: mini, text: articleText() })).status, 202);
    assertLimited(await otherOnB.submit({ model_id: mini, text: articleText() }), 'too_many_jobs');
    const replay = await serviceCalls(cluster.apis[0]?.url ?? '', cluster.tokens[1] as string).submit(
      { model_id: mini, text: articleText() },
      { 'idempotency-key': 'k1' },
    );
    assert.equal(replay.status, 202);
    assert.equal(replay.jobId, keyed.jobId);
  });
});
