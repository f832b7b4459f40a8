// The extension bundles a slim undici (scripts/undici-slim.cjs, mapped by esbuild.mjs's plugin). These tests build the
// client and the proxy dispatcher with that same plugin and make real requests with the result: a download through
// undici's redirect and retry interceptors (a cut body resumed, the API key not sent to another origin), and requests
// through EnvHttpProxyAgent to a loopback CONNECT proxy (VS Code's http.proxy, HTTP_PROXY, NO_PROXY, loopback direct,
// Proxy-Authorization).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import * as esbuild from 'esbuild';
import { jobBody, sendEnvelope, sleep, startFaultServer, type FaultServer } from '../../support/fault-server';
import { startConnectProxy, type ConnectProxy } from '../../support/connect-proxy';
import { API_KEY } from '../../support/api-client';
import type * as ApiModule from '../../../src/api';
import type * as ProxyAgentExports from '../../../src/connection/proxy-agent';

type Api = typeof ApiModule;
type ProxyAgentModule = typeof ProxyAgentExports;

const root = path.join(__dirname, '..', '..', '..');
const HOST = 'slim-service.test';

describe('the slim undici bundle', () => {
  let dir: string;
  let slim: Api & ProxyAgentModule;
  let server: FaultServer;
  let foreign: FaultServer;
  let proxy: ConnectProxy;
  let inputs: string[];

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-slim-'));
    const outfile = path.join(dir, 'slim.js');
    // The plugin the extension bundle is built with (esbuild.mjs is an ES module with top-level await: imported, not
    // required).
    const { undiciSlim } = (await import(pathToFileURL(path.join(root, 'esbuild.mjs')).href)) as {
      undiciSlim: esbuild.Plugin;
    };
    const result = await esbuild.build({
      stdin: {
        contents: "export * from './src/api/index';\nexport { dispatcherFor } from './src/connection/proxy-agent';\n",
        resolveDir: root,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      outfile,
      metafile: true,
      logLevel: 'silent',
      plugins: [undiciSlim],
    });
    inputs = Object.keys(result.metafile.inputs);
    slim = createRequire(__filename)(outfile) as Api & ProxyAgentModule;
    server = await startFaultServer();
    foreign = await startFaultServer();
    proxy = await startConnectProxy(HOST);
  });
  after(async () => {
    await server.close();
    await foreign.close();
    proxy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is built from the slim entry, not undici/index.js', () => {
    assert.ok(
      inputs.some((input) => input.endsWith('scripts/undici-slim.cjs')),
      inputs.join('\n'),
    );
    for (const left of ['node_modules/undici/index.js', 'node_modules/undici/lib/web/fetch/index.js'])
      assert.ok(!inputs.includes(left), `${left} is in the bundle`);
    assert.deepEqual(
      inputs.filter((input) => /undici\/lib\/(web\/websocket|mock|cache)\//.test(input)),
      [],
    );
  });

  it('downloads through a redirect to another origin and resumes a cut body, without the key leaving', async () => {
    const content = randomBytes(150_000);
    let cut = true;
    foreign.on('GET', '/cdn/slim.mp3', async (req, res) => {
      const range = /^bytes=(\d+)-/.exec(String(req.headers.range ?? ''));
      if (range) {
        const start = Number(range[1]);
        res.writeHead(206, {
          etag: '"s1"',
          'content-length': String(content.length - start),
          'content-range': `bytes ${start}-${content.length - 1}/${content.length}`,
        });
        res.end(content.subarray(start));
        return;
      }
      res.writeHead(200, { etag: '"s1"', 'content-type': 'audio/mpeg', 'content-length': String(content.length) });
      if (!cut) {
        res.end(content);
        return;
      }
      cut = false;
      res.write(content.subarray(0, 60_000));
      await sleep(100);
      res.socket?.destroy();
    });
    server.on('GET', '/v1/jobs/s1/outputs/audio.mp3', (_req, res) => {
      res.writeHead(307, { location: `${foreign.url}/cdn/slim.mp3?signature=abc` });
      res.end();
    });
    const client = new slim.JobServiceClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      retryBackoff: { initialMs: 20, maxMs: 100 },
    });
    const destination = path.join(dir, 's1.mp3');
    const result = await client.downloadOutput('/v1/jobs/s1/outputs/audio.mp3', destination);
    assert.equal(result.bytes, content.length);
    assert.ok(readFileSync(destination).equals(content));
    assert.equal(
      server.requestsTo('GET', '/v1/jobs/s1/outputs/audio.mp3')[0]!.headers.authorization,
      `Bearer ${API_KEY}`,
    );
    const atForeign = foreign.requestsTo('GET', '/cdn/slim.mp3');
    assert.equal(atForeign.length, 2, 'the first answer was cut, the second resumed it');
    assert.match(String(atForeign[1]!.headers.range), /^bytes=[1-9]\d*-149999$/);
    assert.equal(atForeign[1]!.headers['if-match'], '"s1"');
    for (const request of atForeign) assert.equal(request.headers.authorization, undefined);
  });

  it('reaches the service through the proxy from http.proxy, with Proxy-Authorization; loopback goes direct', async () => {
    server.on('GET', '/v1/jobs/p1', (_req, res) => sendEnvelope(res, 200, jobBody('p1', 'queued')));
    const port = new URL(server.url).port;
    const settings = { proxy: proxy.url, strictSSL: true, noProxy: [], authorization: 'Basic c2xpbTp0ZXN0' };
    const through = new slim.JobServiceClient({
      baseUrl: `http://${HOST}:${port}`,
      apiKey: API_KEY,
      dispatcher: slim.dispatcherFor(settings),
    });
    const before = proxy.tunnels.length;
    assert.equal((await through.getJob('p1')).status, 'queued');
    assert.deepEqual(proxy.tunnels.slice(before), [`${HOST}:${port}`]);
    assert.equal(proxy.authorizations.at(-1), 'Basic c2xpbTp0ZXN0');

    const local = new slim.JobServiceClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      dispatcher: slim.dispatcherFor(settings),
    });
    assert.equal((await local.getJob('p1')).status, 'queued');
    assert.equal(proxy.tunnels.length, before + 1, 'the loopback request did not use the proxy');
  });

  it('honours NO_PROXY entries, and HTTP_PROXY from the environment when http.proxy is unset', async () => {
    server.on('GET', '/v1/jobs/p2', (_req, res) => sendEnvelope(res, 200, jobBody('p2', 'queued')));
    const port = new URL(server.url).port;
    const bypassing = new slim.JobServiceClient({
      baseUrl: `http://${HOST}:${port}`,
      apiKey: API_KEY,
      maxRetries: 0,
      dispatcher: slim.dispatcherFor({
        proxy: proxy.url,
        strictSSL: true,
        noProxy: [`.${HOST}`],
        authorization: undefined,
      }),
    });
    const before = proxy.tunnels.length;
    // Direct, the made-up name resolves nowhere.
    await assert.rejects(bypassing.getJob('p2'), (error: Error) => error instanceof slim.ConnectionError);
    assert.equal(proxy.tunnels.length, before);

    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, http_proxy: process.env.http_proxy };
    process.env.HTTP_PROXY = proxy.url;
    delete process.env.http_proxy;
    try {
      const fromEnv = new slim.JobServiceClient({
        baseUrl: `http://${HOST}:${port}`,
        apiKey: API_KEY,
        dispatcher: slim.dispatcherFor({ proxy: undefined, strictSSL: true, noProxy: [], authorization: undefined }),
      });
      assert.equal((await fromEnv.getJob('p2')).status, 'queued');
      assert.deepEqual(proxy.tunnels.slice(before), [`${HOST}:${port}`]);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
