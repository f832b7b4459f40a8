// The API's routes, matched on raw, undecoded path segments (see request-handler.ts): what a request asks for, and
// the methods each route takes.

export type Route =
  | { name: 'submit' | 'health' | 'ready' | 'metrics' | 'admin-workers'; methods: readonly string[] }
  | { name: 'job' | 'stream' | 'cancel'; methods: readonly string[]; id: string }
  | { name: 'output'; methods: readonly string[]; id: string; file: string }
  | { name: 'part'; methods: readonly string[]; id: string; file: string };

export function route(target: string): Route | undefined {
  const path = target.replace(/^https?:\/\/[^/]*/i, '').split('?')[0] ?? '';
  const s = path.split('/');
  if (path === '/healthz') return { name: 'health', methods: ['GET', 'HEAD'] };
  if (path === '/readyz') return { name: 'ready', methods: ['GET', 'HEAD'] };
  if (path === '/metrics') return { name: 'metrics', methods: ['GET'] };
  if (s[0] !== '' || s[1] !== 'v1') return undefined;
  if (s.length === 3 && s[2] === 'article-to-audio') return { name: 'submit', methods: ['POST'] };
  if (s.length === 4 && s[2] === 'admin' && s[3] === 'workers') return { name: 'admin-workers', methods: ['GET'] };
  if (s[2] !== 'jobs' || s[3] === undefined) return undefined;
  const id = s[3];
  if (s.length === 4) return { name: 'job', methods: ['GET', 'HEAD'], id };
  if (s.length === 5 && s[4] === 'stream') return { name: 'stream', methods: ['GET'], id };
  if (s.length === 5 && s[4] === 'cancel') return { name: 'cancel', methods: ['POST'], id };
  if (s.length === 6 && s[4] === 'outputs' && s[5] !== undefined)
    return { name: 'output', methods: ['GET', 'HEAD'], id, file: s[5] };
  if (s.length === 6 && s[4] === 'parts' && s[5] !== undefined)
    return { name: 'part', methods: ['GET', 'HEAD'], id, file: s[5] };
  return undefined;
}
