// A loopback web server for the engine's black-box tests: serves the fixture article, and pages that answer only
// when the test says so, which keeps a job in `processing` (fetching its article) for exactly as long as needed.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export const ARTICLE_HTML = readFileSync(path.join(__dirname, '..', 'engine', 'fixtures', 'article.html'), 'utf8');

export interface HeldPage {
  url: string;
  /** Requests received so far (a job that ran again after a restart fetches again). */
  readonly requests: number;
  /** Resolves when the first request arrived. */
  readonly requested: Promise<void>;
  /** Answers every waiting and future request with the article. */
  release(): void;
}

export interface ArticleServer {
  /** The article, served at once. */
  articleUrl: string;
  /** A URL that answers 404. */
  missingUrl: string;
  hold(name: string): HeldPage;
  close(): Promise<void>;
}

export async function startArticleServer(): Promise<ArticleServer> {
  const held = new Map<
    string,
    { released: boolean; waiting: http.ServerResponse[]; requests: number; arrived: () => void }
  >();
  const sendArticle = (res: http.ServerResponse) => {
    if (!res.writableEnded && !res.destroyed)
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE_HTML);
  };
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/article.html') return sendArticle(res);
    const name = /^\/held\/([\w-]+)$/.exec(url)?.[1];
    const page = name ? held.get(name) : undefined;
    if (!page) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    page.requests++;
    page.arrived();
    if (page.released) return sendArticle(res);
    page.waiting.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    articleUrl: `${base}/article.html`,
    missingUrl: `${base}/missing.html`,
    hold(name) {
      let arrived!: () => void;
      const requested = new Promise<void>((resolve) => (arrived = resolve));
      const page = { released: false, waiting: [] as http.ServerResponse[], requests: 0, arrived };
      held.set(name, page);
      return {
        url: `${base}/held/${name}`,
        get requests() {
          return page.requests;
        },
        requested,
        release() {
          page.released = true;
          for (const res of page.waiting.splice(0)) sendArticle(res);
        },
      };
    },
    async close() {
      for (const page of held.values()) for (const res of page.waiting.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
