// A real S3-protocol server on loopback for the team tests (s3rver: the S3 REST API over a folder), with one bucket.
// Clients sign requests with its fixed account (S3RVER / S3RVER), as the AWS SDK does against any S3 service.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** Environment for the AWS SDK in node processes. */
  env: Record<string, string>;
  /** Stops serving (connections refused) until up(); the objects stay. */
  down(): Promise<void>;
  /** Serves again on the same port, with the same objects. */
  up(): Promise<void>;
  stop(): Promise<void>;
}

export async function startS3(bucket = 'article-audio-test'): Promise<TestS3> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'aa-s3-'));
  const serve = (port: number) =>
    new S3rver({ address: '127.0.0.1', port, silent: true, directory, configureBuckets: [{ name: bucket }] });
  let server: S3rver | undefined = serve(0);
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    env: {
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
      ARTICLE_AUDIO_S3_ENDPOINT: endpoint,
    },
    async down() {
      if (!server) return;
      const closing = server.close();
      // The SDK's kept-alive sockets would hold the server open (and keep being served): cut them too.
      (server as unknown as { httpServer?: { closeAllConnections(): void } }).httpServer?.closeAllConnections();
      await closing;
      server = undefined;
    },
    async up() {
      server = serve(address.port);
      await server.run();
    },
    async stop() {
      await server?.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
