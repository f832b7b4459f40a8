// The fetch policy (SSRF): with private networks not allowed, no spelling of a loopback or private address reaches a
// real loopback server, redirects are checked hop by hop, and a closed port cannot be told from an open one. With them
// allowed (one person's engine), the same addresses are fetched.
import * as assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { FetchError, fetchWithLimits } from '../../../src/speech/source/fetch-source';
import { isPublicAddress, resolveAllowed, UnreachableAddressError } from '../../../src/speech/source/network-policy';
import type { FetchLimits } from '../../../src/speech/types';
import { FETCH_LIMITS, type PageServer, serve, startPageServer } from '../../support/speech-support';

const PAGE = '<!doctype html><title>internal</title><p>Internal admin secret.</p>';
const BLOCKED = /it cannot be reached from this service/;

function redirectTo(target: () => string): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (_req, res) => res.writeHead(302, { location: target() }).end();
}

describe('pipeline: the fetch policy for private networks', () => {
  let server: PageServer;
  let closedPort: number;
  before(async () => {
    server = await startPageServer({
      '/page': serve(PAGE, 'text/html'),
      '/secret': serve('root:x:0:0', 'text/plain'),
      '/to-literal': redirectTo(() => server.url('/secret')),
      '/to-hex': redirectTo(() => `http://0x7f000001:${new URL(server.base).port}/secret`),
      '/to-mapped': redirectTo(() => `http://[::ffff:127.0.0.1]:${new URL(server.base).port}/secret`),
    });
    // A port with nothing behind it: a server opened and closed again.
    const probe = await startPageServer({});
    closedPort = Number(new URL(probe.base).port);
    await probe.close();
  });
  after(() => server.close());

  const port = () => new URL(server.base).port;
  const blocked = { ...FETCH_LIMITS, allowPrivateNetwork: false };
  const fetchUrl = (url: string, limits: FetchLimits = blocked) =>
    fetchWithLimits(url, limits, new AbortController().signal, 'text/html');

  /** Every way of writing this machine's loopback address (and a few private ones) in a URL, for a port. */
  function spellings(p: string): string[] {
    return [
      `http://127.0.0.1:${p}/page`,
      `http://0x7f000001:${p}/page`,
      `http://2130706433:${p}/page`,
      `http://017700000001:${p}/page`,
      `http://0177.0.0.1:${p}/page`,
      `http://127.1:${p}/page`,
      `http://127.0.0.1.:${p}/page`,
      `http://localhost:${p}/page`,
      `http://localhost.:${p}/page`,
      `http://LOCALHOST:${p}/page`,
      `http://[::ffff:127.0.0.1]:${p}/page`,
      `http://[0:0:0:0:0:ffff:7f00:1]:${p}/page`,
      `http://[::127.0.0.1]:${p}/page`,
      `http://[::1]:${p}/page`,
      `http://0.0.0.0:${p}/page`,
      `http://0:${p}/page`,
    ];
  }

  it('fetches no spelling of a loopback address, and says the same for each', async () => {
    const before = server.hits.get('/page') ?? 0;
    for (const url of spellings(port())) {
      await assert.rejects(
        fetchUrl(url),
        (error: Error) =>
          error instanceof FetchError && BLOCKED.test(error.message) && !error.message.includes('secret'),
        url,
      );
    }
    assert.equal(server.hits.get('/page') ?? 0, before, 'no request reached the loopback server');
  });

  it('classifies private, link-local, metadata, CGNAT, unique-local, multicast and unspecified addresses as not public', async () => {
    const notPublic = [
      '127.0.0.1',
      '127.255.255.254',
      '10.0.0.1',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.100.100.200',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      'ff02::1',
      '64:ff9b::a00:1',
      '2002:7f00:1::1',
      '[::1]',
    ];
    for (const address of notPublic) {
      assert.equal(isPublicAddress(address), false, address);
      // Refused before any connection is tried (these would otherwise hang or reach something).
      await assert.rejects(
        resolveAllowed(address, { allowPrivateNetwork: false }),
        (error: Error) => error instanceof UnreachableAddressError,
        address,
      );
    }
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8'])
      assert.equal(isPublicAddress(address), true, address);
    assert.deepEqual(await resolveAllowed('10.0.0.1', { allowPrivateNetwork: true }), {
      address: '10.0.0.1',
      family: 4,
    });
  });

  it('checks every redirect hop: an allowed host cannot redirect to a private address', async () => {
    // `localhost` is allowed by name (as a team would allow its intranet wiki); 127.0.0.1 in any spelling is not.
    const limits = { ...blocked, allowedHosts: ['localhost'] };
    const page = await fetchUrl(`http://localhost:${port()}/page`, limits);
    assert.equal(page.body.toString(), PAGE);
    for (const hop of ['/to-literal', '/to-hex', '/to-mapped']) {
      await assert.rejects(fetchUrl(`http://localhost:${port()}${hop}`, limits), BLOCKED, hop);
    }
    assert.equal(server.hits.get('/secret') ?? 0, 0, 'the private target was never requested');
    // With private networks allowed the same redirect is followed.
    assert.equal((await fetchUrl(`http://localhost:${port()}/to-hex`, FETCH_LIMITS)).body.toString(), 'root:x:0:0');
  });

  it('does not tell a closed port from an open one (no port scanning through article or intro/outro URLs)', async () => {
    const messages = await Promise.all(
      [port(), String(closedPort)].map((p) =>
        fetchUrl(`http://127.0.0.1:${p}/x`).then(
          () => 'fetched',
          (error: Error) => error.message.replace(`:${p}`, ':PORT'),
        ),
      ),
    );
    assert.match(messages[0]!, BLOCKED);
    assert.equal(messages[0], messages[1]);
    // A name that does not resolve reads the same as a blocked address.
    await assert.rejects(fetchUrl('http://no-such-host.invalid/x'), BLOCKED);
  });

  it('fetches loopback addresses in every IPv4 spelling when private networks are allowed', async () => {
    // (`localhost.` is left out here: not every resolver answers for it.)
    for (const url of spellings(port()).filter((u) => !/\[::1\]|\[::127|0\.0\.0\.0|\/\/0:|localhost\./.test(u))) {
      const fetched = await fetchUrl(url, FETCH_LIMITS);
      assert.equal(fetched.body.toString(), PAGE, url);
    }
    // And then a closed port says so, for the one person who can see it anyway.
    await assert.rejects(fetchUrl(`http://127.0.0.1:${closedPort}/x`, FETCH_LIMITS), /connection was refused/);
  });
});
