// pdf.js's two modules, bundled as a file of their own (dist/pdfjs.js) and loaded by pdf-article.ts only when a PDF
// is read: they are 3.4 MB of the parse worker's code, and parse threads start often (the engine keeps one between
// jobs, the CLI and the extension start one per PDF), so each thread that reads no PDF would otherwise parse them for
// nothing (about 100 ms of CPU a thread).
// Evaluated in this order: the worker's code first (the "fake worker" pdf.js finds through globalThis.pdfjsWorker).
/* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports */
export const pdfjsWorker: unknown = require('pdfjs-dist/legacy/build/pdf.worker.mjs');
export const pdfjs = require('pdfjs-dist/legacy/build/pdf.mjs') as typeof import('pdfjs-dist/legacy/build/pdf.mjs');
/* eslint-enable @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports */
