// Two import rules eslint's layer patterns cannot say (ARCHITECTURE.md, Modules):
// - no import circles anywhere under src/ (type-only imports count: a circle of types is a circle of ideas);
// - inside src/engine, core/ (the contracts, the runner's parts) imports none of http/, embedded/, team/, and http/
//   imports only core/: the two backends and the API meet in core, never in each other.
// Resolution is TypeScript's own, so what it follows is what the compiler follows. Before checking the tree, it checks
// itself on a made-up graph with a circle and a wrong-way import, so a check that stopped finding them fails.
// Run by scripts/test-all.mjs with the static checks; alone: node scripts/check-imports.mjs
import path from 'node:path';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');

/** Inner layers of src/engine: what each folder may import of its siblings. */
const ENGINE_LAYERS = { core: [], http: ['core'], embedded: ['core'], team: ['core', 'embedded'] };

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

function importGraph(files) {
  const options = { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Bundler, allowJs: false };
  const host = ts.createCompilerHost(options);
  const graph = new Map();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = info.importedFiles
      .filter((ref) => ref.fileName.startsWith('.'))
      .map((ref) => ts.resolveModuleName(ref.fileName, file, options, host).resolvedModule?.resolvedFileName)
      .filter((target) => target && target.startsWith(src) && !target.endsWith('.d.ts'));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Every circle, each once, as the list of its files (Tarjan's strongly connected components). */
export function circles(graph) {
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (node) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), indices.get(next)));
    }
    if (low.get(node) === indices.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.reverse());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

/** Imports inside src/engine that point the wrong way between its folders. */
export function wrongWay(graph, engine) {
  const folderOf = (file) => {
    const rel = path.relative(engine, file);
    return rel.startsWith('..') ? undefined : rel.split(path.sep)[0];
  };
  const found = [];
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    if (!(from in ENGINE_LAYERS)) continue;
    for (const target of targets) {
      const to = folderOf(target);
      if (to !== from && to in ENGINE_LAYERS && !ENGINE_LAYERS[from].includes(to)) found.push([file, target]);
    }
  }
  return found;
}

function selfCheck() {
  const e = (p) => path.join('/x/src/engine', p);
  const graph = new Map([
    [e('core/a.ts'), [e('core/b.ts')]],
    [e('core/b.ts'), [e('core/a.ts'), e('embedded/c.ts')]],
    [e('embedded/c.ts'), [e('core/a.ts')]],
    [e('http/d.ts'), [e('core/a.ts')]],
  ]);
  const c = circles(graph);
  const w = wrongWay(graph, '/x/src/engine');
  if (c.length !== 1 || c[0].length !== 3 || w.length !== 1 || !w[0][0].endsWith('core/b.ts'))
    throw new Error(`check-imports no longer finds a made-up circle and wrong-way import: ${JSON.stringify({ c, w })}`);
}

selfCheck();
const graph = importGraph(sourceFiles(src));
const rel = (file) => path.relative(root, file);
const found = circles(graph);
const wrong = wrongWay(graph, path.join(src, 'engine'));
for (const circle of found) console.error(`import circle: ${[...circle, circle[0]].map(rel).join(' -> ')}`);
for (const [file, target] of wrong)
  console.error(
    `wrong way: ${rel(file)} imports ${rel(target)} (src/engine: core imports none of http, embedded, team; http and embedded only core)`,
  );
if (found.length + wrong.length > 0) process.exit(1);
console.log(`${graph.size} files: no import circles, engine folders import the right way`);
