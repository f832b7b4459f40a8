// Shows that F5 works as ARCHITECTURE.md says: .vscode/launch.json's extension-host configuration names a task that
// exists in .vscode/tasks.json, that task runs the npm script that builds (esbuild.mjs), one of esbuild.mjs's bundles
// is the file package.json's "main" points at, the launch loads the working tree as the extension, and its outFiles
// cover that file (so breakpoints bind). Then it breaks each of those links in a copy and expects a complaint, so the
// check cannot pass by checking nothing.
// Run by scripts/test-all.mjs with the static checks; alone: node scripts/check-launch.mjs
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { builds } from '../esbuild.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** launch.json and tasks.json allow comments and trailing commas, as VS Code does. */
function readJsonc(file) {
  const { config, error } = ts.parseConfigFileTextToJson(file, readFileSync(path.join(root, file), 'utf8'));
  if (error) throw new Error(`${file}: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`);
  return config;
}

/** The files esbuild.mjs writes, relative to the repository: outdir + each entry name + .js, or outfile. */
function bundleOutputs() {
  return builds.flatMap((build) =>
    build.outfile
      ? [path.normalize(build.outfile)]
      : Object.keys(build.entryPoints).map((name) => path.join(build.outdir, `${name}.js`)),
  );
}

/** VS Code's label for a task: its own label, else "npm: <script>" for npm tasks. */
function labelOf(task) {
  return task.label ?? (task.type === 'npm' ? `npm: ${task.script}` : undefined);
}

export function launchProblems({ launch, tasks, pkg, outputs }) {
  const problems = [];
  const hosts = (launch.configurations ?? []).filter((c) => c.type === 'extensionHost' && c.request === 'launch');
  if (hosts.length === 0) return ['launch.json has no extensionHost launch configuration'];
  const main = path.normalize(pkg.main ?? '');
  for (const config of hosts) {
    const name = `launch "${config.name}"`;
    if (!(config.args ?? []).includes('--extensionDevelopmentPath=${workspaceFolder}'))
      problems.push(`${name} does not load the working tree (--extensionDevelopmentPath=\${workspaceFolder})`);
    const task = (tasks.tasks ?? []).find((t) => labelOf(t) === config.preLaunchTask);
    if (!task) {
      problems.push(`${name}: preLaunchTask "${config.preLaunchTask}" is not a task in tasks.json`);
    } else {
      const script = task.type === 'npm' ? pkg.scripts?.[task.script] : undefined;
      if (!script || !/^node esbuild\.mjs(\s|$)/.test(script) || /--watch/.test(script))
        problems.push(`${name}: task "${labelOf(task)}" does not run the build (node esbuild.mjs), it runs ${script}`);
    }
    if (!outputs.includes(main)) problems.push(`package.json "main" (${pkg.main}) is not a bundle esbuild.mjs builds`);
    const mainPath = path.join(root, main);
    const globs = (config.outFiles ?? []).map((glob) => glob.replace('${workspaceFolder}', root));
    if (!globs.some((glob) => path.matchesGlob(mainPath, glob)))
      problems.push(`${name}: outFiles ${JSON.stringify(config.outFiles)} do not cover ${pkg.main}`);
  }
  return problems;
}

const real = {
  launch: readJsonc('.vscode/launch.json'),
  tasks: readJsonc('.vscode/tasks.json'),
  pkg: JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')),
  outputs: bundleOutputs(),
};
const failures = launchProblems(real);

const copy = () => JSON.parse(JSON.stringify(real));
const broken = [
  ['a preLaunchTask naming no task', (s) => (s.launch.configurations[0].preLaunchTask = 'npm: bild')],
  [
    'a task that runs another script',
    (s) => (s.pkg.scripts[s.tasks.tasks[0].script] = 'node scripts/check-commands.mjs'),
  ],
  ['a main no bundle builds', (s) => (s.pkg.main = './dist/extension-old.js')],
  ['outFiles that miss main', (s) => (s.launch.configurations[0].outFiles = ['${workspaceFolder}/out/**/*.js'])],
  ['no extensionDevelopmentPath', (s) => (s.launch.configurations[0].args = [])],
];
for (const [what, breakIt] of broken) {
  const state = copy();
  breakIt(state);
  if (launchProblems(state).length === 0) failures.push(`the check did not notice ${what}`);
}

if (failures.length > 0) {
  for (const failure of failures) console.error(`F5: ${failure}`);
  process.exit(1);
}
console.log(
  `F5 holds: "${real.launch.configurations[0].preLaunchTask}" builds ${real.pkg.main}; ${broken.length} broken copies caught`,
);
