// Builds the extraction development set (bench/extraction.ts reads it) from public git repositories of saved pages
// with ground truth. The pages are other people's writing: they are exported to a folder outside the repository and
// never committed. Each page becomes two files in the output folder:
//
//   <name>.html   the page, re-encoded as UTF-8
//   <name>.json   { "source", "url", "expected"?: article text, "include"?: [snippets], "exclude"?: [snippets],
//                   "article": false when the source says the page holds no article }
//
//   node --import tsx bench/devset.ts --out /work/devset \
//     --scrapinghub <clone of scrapinghub/article-extraction-benchmark> \
//     --readability <clone of mozilla/readability> \
//     --trafilatura <clone of adbar/trafilatura>
//
// A clone may be bare (a mirror): files are read with `git show HEAD:<path>`, so no work tree is needed.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { fragmentText } from './lib/page-text';

export interface DevPage {
  source: string;
  url?: string;
  /** The article's text, when the source has it in full. */
  expected?: string;
  /** Snippets that must be read (trafilatura's "with"). */
  include?: string[];
  /** Snippets that must not be read (trafilatura's "without"). */
  exclude?: string[];
  /** False when the source marks the page as holding no article. */
  article?: boolean;
}

function git(repo: string, args: string[]): Buffer {
  return execFileSync('git', ['-C', repo, ...args], { maxBuffer: 256 * 1024 * 1024 });
}

function show(repo: string, file: string): Buffer {
  return git(repo, ['show', `HEAD:${file}`]);
}

function list(repo: string, folder: string): string[] {
  return git(repo, ['ls-tree', '--name-only', 'HEAD', `${folder}/`])
    .toString('utf8')
    .split('\n')
    .filter(Boolean);
}

/** Saved pages come in many encodings; the page's own declaration decides, then UTF-8, then Windows-1252. */
function decodePage(bytes: Buffer): string {
  const head = bytes.subarray(0, 4096).toString('latin1');
  const declared = /<meta[^>]+charset\s*=\s*["']?\s*([\w-]+)/i.exec(head)?.[1];
  if (declared) {
    try {
      return new TextDecoder(declared).decode(bytes);
    } catch {
      // An unknown label: fall through.
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

function write(out: string, name: string, html: string, page: DevPage): void {
  writeFileSync(path.join(out, `${name}.html`), html);
  writeFileSync(path.join(out, `${name}.json`), `${JSON.stringify(page, null, 1)}\n`);
}

/** scrapinghub/article-extraction-benchmark: 181 news and blog pages, article bodies written out by hand. */
function scrapinghub(repo: string, out: string): number {
  const truth = JSON.parse(show(repo, 'ground-truth.json').toString('utf8')) as Record<
    string,
    { articleBody: string; url?: string }
  >;
  let count = 0;
  for (const [id, entry] of Object.entries(truth)) {
    const html = gunzipSync(show(repo, `html/${id}.html.gz`)).toString('utf8');
    write(out, `sh-${id.slice(0, 16)}`, html, { source: 'scrapinghub', url: entry.url, expected: entry.articleBody });
    count++;
  }
  return count;
}

/** mozilla/readability test pages: source.html and Readability's own expected output (so biased towards it). */
function readability(repo: string, out: string): number {
  let count = 0;
  for (const folder of list(repo, 'test/test-pages')) {
    const name = path.posix.basename(folder);
    let meta: { readerable?: boolean } = {};
    try {
      meta = JSON.parse(show(repo, `${folder}/expected-metadata.json`).toString('utf8')) as typeof meta;
    } catch {
      // Not every page has metadata.
    }
    const html = decodePage(show(repo, `${folder}/source.html`));
    const expected = fragmentText(show(repo, `${folder}/expected.html`).toString('utf8'));
    write(out, `moz-${name}`, html, {
      source: 'readability',
      url: `http://fakehost/test/${name}.html`,
      expected,
      article: meta.readerable !== false,
    });
    count++;
  }
  return count;
}

/** adbar/trafilatura evaluation: ~950 pages in many languages, a few must-contain and must-not-contain snippets each. */
function trafilatura(repo: string, out: string): number {
  const data = JSON.parse(show(repo, 'tests/evaldata.json').toString('utf8')) as Record<
    string,
    { file: string; with?: string[]; without?: string[] }
  >;
  const where = new Map<string, string>();
  for (const folder of ['tests/cache', 'tests/eval'])
    for (const file of list(repo, folder)) where.set(path.posix.basename(file), file);
  let count = 0;
  for (const [url, entry] of Object.entries(data)) {
    const file = where.get(entry.file);
    if (!file) continue;
    const html = decodePage(show(repo, file));
    const name = `tf-${entry.file
      .replace(/\.html?$/i, '')
      .replace(/[^\w.-]+/g, '_')
      .slice(0, 80)}`;
    write(out, name, html, { source: 'trafilatura', url, include: entry.with ?? [], exclude: entry.without ?? [] });
    count++;
  }
  return count;
}

function main(): void {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const index = args.indexOf(name);
    return index >= 0 ? args[index + 1] : undefined;
  };
  const out = option('--out');
  if (!out) {
    console.error('usage: bench/devset.ts --out DIR [--scrapinghub REPO] [--readability REPO] [--trafilatura REPO]');
    process.exit(2);
  }
  mkdirSync(out, { recursive: true });
  const sources: [string, (repo: string, out: string) => number][] = [
    ['--scrapinghub', scrapinghub],
    ['--readability', readability],
    ['--trafilatura', trafilatura],
  ];
  for (const [flag, exportFrom] of sources) {
    const repo = option(flag);
    if (repo) console.log(`${flag.slice(2)}: ${exportFrom(repo, out)} pages`);
  }
}

main();
