// Checks that package.json and src/command-ids.ts name the same commands, and that every command the code
// table names is registered somewhere in src/ (registerCommand(Commands.x, ...), or the table in src/commands/index.ts). Exit 1 with the differences.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const contributed = new Set(pkg.contributes.commands.map((c) => c.command));
const table = readFileSync(path.join(root, 'src/command-ids.ts'), 'utf8');
const tableBody = table.slice(table.indexOf('export const Commands'), table.indexOf('} as const'));
const entries = [...tableBody.matchAll(/^\s*(\w+):\s*'([^']+)'/gm)].map((m) => ({ key: m[1], id: m[2] }));
const inTable = new Set(entries.map((e) => e.id));

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sources(full) : full.endsWith('.ts') ? [full] : [];
  });
}
const code = sources(path.join(root, 'src'))
  .map((f) => readFileSync(f, 'utf8').replace(/^\s*\/\/.*$/gm, ''))
  .join('\n');
const registered = new Set(
  // Registered by hand (registerCommand(Commands.x, …)) or in the table of src/commands/index.ts ([Commands.x]: factory).
  entries
    .filter((e) =>
      new RegExp(`registerCommand\\(\\s*Commands\\.${e.key}\\b|\\[Commands\\.${e.key}\\]\\s*:\\s*\\w`).test(code),
    )
    .map((e) => e.id),
);

const problems = [];
for (const id of contributed)
  if (!inTable.has(id)) problems.push(`contributed in package.json but missing from src/command-ids.ts: ${id}`);
for (const id of inTable)
  if (!contributed.has(id)) problems.push(`in src/command-ids.ts but not contributed in package.json: ${id}`);
for (const id of inTable)
  if (!registered.has(id)) problems.push(`never registered with registerCommand(Commands.…): ${id}`);
const menuIds = Object.values(pkg.contributes.menus ?? {})
  .flat()
  .map((m) => m.command);
for (const id of menuIds)
  if (!contributed.has(id)) problems.push(`menu names a command that is not contributed: ${id}`);

if (problems.length > 0) {
  console.error(`check-commands: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`check-commands: ${contributed.size} commands contributed, in the table and registered`);
