// Shows that the layer rules in eslint.config.mjs bite: lints, with the project's own configuration, a file in each
// layer that imports what that layer must not (vscode, a layer above it), and expects `no-restricted-imports` to
// fail it; and the allowed imports, expecting nothing. A rule that stopped matching fails this check.
// Run by scripts/test-all.mjs with the static checks; alone: node scripts/check-layers.mjs
import { ESLint } from 'eslint';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** [file the text is linted as, import line, whether it must be refused] */
const CASES = [
  ['src/protocol/x.ts', "import * as vscode from 'vscode';", true],
  ['src/protocol/x.ts', "import { readFile } from 'node:fs/promises';", true],
  ['src/protocol/x.ts', "import { JobServiceClient } from '../api/index';", true],
  ['src/api/x.ts', "import * as vscode from 'vscode';", true],
  ['src/api/x.ts', "import { startEngine } from '../engine/index';", true],
  ['src/api/x.ts', "import { MODELS } from '../protocol';", false],
  // Advice on what to do lives beside notify.ts; the client states facts.
  ['src/api/x.ts', "import { adviceFor } from '../error-advice';", true],
  ['src/cli/x.ts', "import { adviceFor } from '../error-advice';", false],
  ['src/engine/x.ts', "import { JobServiceClient } from '../api/index';", true],
  ['src/engine/http/x.ts', "import { JobServiceClient } from '../../api/client';", true],
  ['src/speech/voice/x.ts', "import * as vscode from 'vscode';", true],
  ['src/speech/voice/x.ts', "import { countCharacters } from '../../protocol';", false],
  // The speech pipeline is a library under the engine: it never reaches up into the job service.
  ['src/speech/x.ts', "import { startEngine } from '../engine/index';", true],
  ['src/speech/text/x.ts', "import { JobQueue } from '../../engine/core/job-queue';", true],
  ['src/engine/core/x.ts', "import { createSpeechPipeline } from '../../speech/index';", false],
  ['src/cli/x.ts', "import * as vscode from 'vscode';", true],
  ['src/cli/x.ts', "import { JobTracker } from '../jobs/job-tracker';", true],
  ['src/cli/x.ts', "import { startEngine } from '../engine/index';", false],
  ['src/jobs/x.ts', "import * as vscode from 'vscode';", true],
  ['src/jobs/x.ts', "import { ServiceConnection } from '../connection/connection';", true],
  ['src/jobs/x.ts', "import { JobServiceClient } from '../api/index';", false],
  ['src/connection/x.ts', "import { startEngine } from '../engine/index';", true],
  ['src/connection/x.ts', "import { ENGINE_ENV } from '../engine/process-tuning';", false],
  ['src/connection/x.ts', "import { registerCommands } from '../commands';", true],
  ['src/views/x.ts', "import { ServiceConnection } from '../connection/connection';", true],
  ['src/views/x.ts', "import { Disposable } from '../disposable';", false],
  ['src/views/x.ts', "import { PlayerPanel } from '../webview/player-panel';", true],
  ['src/webview/x.ts', "import { JobsTree } from '../views/jobs-tree';", false],
  ['src/webview/x.ts', "import { activate } from '../extension';", true],
  ['media/player/x.ts', "import * as vscode from 'vscode';", true],
];

// The project's configuration, without the type-aware rules (they need each file in a tsconfig and add nothing here).
const { configs } = await import('typescript-eslint');
const untyped = new ESLint({
  cwd: root,
  overrideConfig: [
    configs.disableTypeChecked,
    { languageOptions: { parserOptions: { projectService: false, project: null } } },
  ],
});

let failed = 0;
for (const [file, line, refused] of CASES) {
  const [result] = await untyped.lintText(
    `${line}\nexport const used = [${/import \* as (\w+)|import \{ (\w+)/.exec(line)?.slice(1).find(Boolean)}];\n`,
    { filePath: path.join(root, file) },
  );
  const hits = (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports');
  const ok = refused ? hits.length > 0 : hits.length === 0;
  if (!ok) failed++;
  console.log(
    `${ok ? 'ok  ' : 'FAIL'} ${file}: ${line} ${refused ? 'refused' : 'allowed'}${hits[0] ? ` (${hits[0].message.replace(/^.*pattern\. /, '')})` : ''}`,
  );
}
console.log(failed === 0 ? `${CASES.length} layer cases hold` : `${failed} of ${CASES.length} layer cases do not hold`);
process.exit(failed === 0 ? 0 : 1);
