// A team API node holds as many open connections as `serve` does by default (half the open-files limit, at most
// 1024): 300 streams on one node all get their events. Before, an API node without --max-connections used the HTTP
// layer's own default of 256 and closed the newest connections beyond it, which capped the followers per node.
// Real processes: Postgres and an API node (dist/cli.js; npm run build first); no worker (the job stays queued).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { articleText, serviceCalls } from '../support/http-calls';
import { type SseReader, openStream } from '../support/sse-reader';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const STREAMS = 300;

describe('team API node connections', () => {
  let postgres: TestPostgres;
  let cluster: Cluster;

  before(async () => {
    postgres = await startPostgres();
    cluster = await startCluster({ serverUrl: postgres.url });
  });
  after(async () => {
    await cluster?.dispose();
    await postgres?.stop();
  });

  it(`${STREAMS} streams on one API node all get their events (default --max-connections as for serve)`, async () => {
    const soft = Number(/^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]);
    assert.ok(soft >= 2 * STREAMS + 100, `this test needs an open-files limit of ${2 * STREAMS + 100} (ulimit -n)`);
    const api = await cluster.startApi();
    const token = cluster.tokens[0] as string;
    const id = (await serviceCalls(api.url, token).submit({ model_id: 'article-audio-1-mini', text: articleText() }))
      .jobId;
    const streams: SseReader[] = [];
    try {
      for (let i = 0; i < STREAMS; i += 25)
        streams.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(25, STREAMS - i) }, () =>
              openStream(`${api.url}/v1/jobs/${id}/stream`, token),
            ),
          )),
        );
      assert.deepEqual(
        streams.filter((s) => s.response.status !== 200).map((s) => s.response.status),
        [],
        'every stream is answered',
      );
      // Each has the queued job's status; none was closed to make room for the others.
      await Promise.all(streams.map((s) => s.until(() => s.events.length >= 1, 'the first event', 60_000)));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(streams.filter((s) => s.ended).length, 0, 'no stream was closed');
      assert.doesNotMatch(api.stderr, /allowed connections are busy/);
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});
