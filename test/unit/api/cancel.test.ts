// cancelJob: POST /v1/jobs/<id>/cancel (an engine extension); 404/405/501 there mean "not supported" when the job exists.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NotFoundError } from '../../../src/api';
import { jobBody, sendEnvelope, sendErrors, startFaultServer, type FaultServer } from '../../support/fault-server';
import { clientFor, rejectionOf } from '../../support/api-client';

describe('cancelJob', () => {
  let server: FaultServer;
  before(async () => {
    server = await startFaultServer();
  });
  after(() => server.close());

  it('cancels, and returns the job the service reports', async () => {
    server.on('POST', '/v1/jobs/c1/cancel', (_req, res) =>
      sendEnvelope(
        res,
        200,
        jobBody('c1', 'failed', { error: { code: 'cancelled', message: 'The job was cancelled.' } }),
      ),
    );
    const result = await clientFor(server).client.cancelJob('c1');
    assert.equal(result.supported, true);
    assert.equal(result.job?.status, 'failed');
    assert.equal(result.job?.error?.code, 'cancelled');
    const post = server.requestsTo('POST', '/v1/jobs/c1/cancel')[0]!;
    assert.equal(post.body, '');
  });

  it('reads the job when the cancel answer has no job in it', async () => {
    server.on('POST', '/v1/jobs/c2/cancel', (_req, res) => {
      res.writeHead(202);
      res.end();
    });
    server.on('GET', '/v1/jobs/c2', (_req, res) => sendEnvelope(res, 200, jobBody('c2', 'processing')));
    const result = await clientFor(server).client.cancelJob('c2');
    assert.deepEqual([result.supported, result.job?.status], [true, 'processing']);
  });

  it('says "not supported" (405 or 404 there) when the job exists', async () => {
    server.on('POST', '/v1/jobs/c3/cancel', (_req, res) =>
      sendErrors(res, 405, [{ code: 'method_not_allowed', message: 'no' }]),
    );
    server.on('GET', '/v1/jobs/c3', (_req, res) => sendEnvelope(res, 200, jobBody('c3', 'processing')));
    const result = await clientFor(server).client.cancelJob('c3');
    assert.deepEqual([result.supported, result.job?.status], [false, 'processing']);

    server.on('GET', '/v1/jobs/c4', (_req, res) => sendEnvelope(res, 200, jobBody('c4', 'queued')));
    const unrouted = await clientFor(server).client.cancelJob('c4');
    assert.deepEqual([unrouted.supported, unrouted.job?.status], [false, 'queued']);
  });

  it('is a NotFoundError when the job itself is unknown', async () => {
    const { error } = await rejectionOf(clientFor(server).client.cancelJob('c5'));
    assert.ok(error instanceof NotFoundError);
    assert.match(error.message, /does not know job c5/);
  });
});
