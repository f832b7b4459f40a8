// Entry of dist/engine.js, the engine process the VS Code extension starts:
//   ELECTRON_RUN_AS_NODE=1 <execPath> dist/engine.js --port 0 --data-dir DIR [--exit-with-stdin]
// with the token(s) in ARTICLE_AUDIO_TOKENS. Prints exactly one JSON line on stdout once it listens,
// {"event":"listening","url":"http://127.0.0.1:PORT"}, or {"event":"error","message":"..."} if it cannot start
// (then exits 1, or 2 for bad settings). Everything else goes to stderr.
import { runEngineProcess } from './engine-process';
import { PERSONAL_ENGINE_DEFAULTS, UsageError } from './settings';

runEngineProcess({
  args: process.argv.slice(2),
  env: process.env,
  defaultPort: 0,
  // The extension's engine serves the one person at this machine, who may convert their own localhost docs.
  serviceDefaults: PERSONAL_ENGINE_DEFAULTS,
  announce(url) {
    process.stdout.write(`${JSON.stringify({ event: 'listening', url })}\n`);
  },
}).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stdout.write(`${JSON.stringify({ event: 'error', message })}\n`);
  process.stderr.write(`article-audio engine: ${message}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
