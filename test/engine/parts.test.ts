// Audio in parts on the real engine process with real speech: the parts are whole-frame MP3s that decode alone, and
// one after another they are the final MP3's stream byte for byte. The engine is killed with SIGKILL between two
// parts: the parts it had announced are served again after the restart, unchanged, none is announced twice, and the
// job finishes with the same contiguous parts.
import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { audioStart, frameAt, id3Length } from '../../src/speech/audio/mp3-frames';
import { checkMp3 } from '../support/mp3-check';
import { type EngineProcess, repoRoot, startEngineProcess } from '../support/engine-process';
import { type ServiceCalls, serviceCalls, waitForJob } from '../support/http-calls';
import { openStream } from '../support/sse-reader';

interface WirePart {
  index: number;
  start_s: number;
  duration_s: number;
  url: string;
  transcript_url: string;
  final: boolean;
}

const TEXT = readFileSync(path.join(repoRoot, 'test/fixtures/articles/medium.md'), 'utf8').slice(0, 5000);

describe('engine: audio in parts with real speech, and kill -9 between two parts', () => {
  let engine: EngineProcess;
  let calls: ServiceCalls;

  before(async () => {
    engine = await startEngineProcess({ entry: 'serve', args: ['--concurrency', '1'] });
    calls = serviceCalls(engine.url, engine.tokens[0] as string);
  });
  after(async () => {
    await engine.dispose();
  });

  it('serves announced parts after a restart, announces none twice, and the parts make the final MP3', async () => {
    const token = engine.tokens[0] as string;
    const auth = { authorization: `Bearer ${token}` };
    const bytes = async (url: string) => {
      const response = await fetch(`${engine.url}${new URL(url).pathname}`, { headers: auth });
      assert.equal(response.status, 200, url);
      return { etag: response.headers.get('etag'), body: Buffer.from(await response.arrayBuffer()) };
    };
    const partOf = (data: string) => (JSON.parse(data) as { part?: WirePart }).part;
    const id = (await calls.submit({ model_id: 'article-audio-1-pro', text: TEXT })).jobId;
    const stream = await openStream(`${engine.url}/v1/jobs/${id}/stream`, token);
    await stream.next((e) => e.event === 'result' && partOf(e.data)?.index === 1, 'part 1', 300_000);
    const before = stream.events
      .map((e) => (e.event === 'result' ? partOf(e.data) : undefined))
      .filter((p): p is WirePart => p !== undefined);
    const kept = await Promise.all(before.map((p) => bytes(p.url)));
    const first = await checkMp3(kept[0]!.body);
    assert.ok(first.decodedS > 0.5, `part 0 alone decodes to ${first.decodedS} s`);

    assert.equal((await engine.kill9()).signal, 'SIGKILL');
    await engine.restart();
    const afterRestart = (await calls.get(`/v1/jobs/${id}`)).job;
    assert.ok(
      ['queued', 'processing'].includes(afterRestart.status),
      `the job is ${afterRestart.status} after the restart`,
    );
    for (const [i, p] of before.entries()) {
      const again = await bytes(p.url);
      assert.equal(again.etag, kept[i]!.etag, `part ${p.index} changed across the kill`);
      assert.ok(again.body.equals(kept[i]!.body));
    }

    const job = await waitForJob(calls, id, (j) => j.status === 'succeeded' || j.status === 'failed', 600_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const history = await openStream(`${engine.url}/v1/jobs/${id}/stream`, token);
    await history.done;
    const announced = history.events
      .map((e) => (e.event === 'result' ? partOf(e.data) : undefined))
      .filter((p): p is WirePart => p !== undefined);
    assert.deepEqual(
      announced.map((p) => p.index),
      [...announced.keys()],
      'each part announced once, in order',
    );
    assert.ok(announced.length >= 3, `only ${announced.length} parts`);
    assert.equal(announced.at(-1)?.final, true);
    assert.deepEqual(announced.slice(0, before.length), before, 'the parts announced before the kill stand');

    const final = (await bytes(job.outputs!.results.find((r) => r.content_type === 'audio/mpeg')!.url)).body;
    assert.ok(frameAt(final, id3Length(final))?.info, 'the final MP3 has its Info frame after its ID3 tag');
    const parts = await Promise.all(announced.map((p) => bytes(p.url)));
    assert.ok(
      Buffer.concat(parts.map((p) => p.body)).equals(final.subarray(audioStart(final))),
      'the parts one after another are the final MP3 after its ID3 tag and Info frame',
    );
    const said = announced.reduce((sum, p) => sum + p.duration_s, 0);
    const facts = await checkMp3(final);
    assert.ok(Math.abs(facts.durationS - said) < 0.2, `the parts last ${said} s, the MP3 ${facts.durationS} s`);
    const vtt = await fetch(`${engine.url}${new URL(announced[1]!.transcript_url).pathname}`, { headers: auth });
    assert.match(await vtt.text(), /^WEBVTT[\s\S]*-->/);
  });

  // The record names a part before its result event is appended: a crash between the two (or a log whose tail was
  // lost) leaves a part named and never announced. The next run announces it again (the stream decides what was
  // announced); it used to skip it as known by name, leaving a gap in the parts.
  it('announces again a part the record names but the stream never got', async () => {
    const token = engine.tokens[0] as string;
    const partOf = (data: string) => (JSON.parse(data) as { part?: WirePart }).part;
    const id = (await calls.submit({ model_id: 'article-audio-1-mini', text: TEXT })).jobId;
    const stream = await openStream(`${engine.url}/v1/jobs/${id}/stream`, token);
    await stream.next((e) => e.event === 'result' && partOf(e.data)?.index === 1, 'part 1', 300_000);
    assert.equal((await engine.kill9()).signal, 'SIGKILL');

    // The stream loses part 1's event and all after it; the record still names part 1's files.
    const log = path.join(engine.dataDir, 'jobs', id, 'events.ndjson');
    const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    const cut = lines.findIndex((line) => {
      const e = JSON.parse(line) as { event: string; data?: { part?: { index?: number } } };
      return e.event === 'result' && e.data?.part?.index === 1;
    });
    assert.ok(cut > 0, "part 1's event is in the log");
    writeFileSync(
      log,
      lines
        .slice(0, cut)
        .map((line) => `${line}\n`)
        .join(''),
    );
    const record = JSON.parse(readFileSync(path.join(engine.dataDir, 'jobs', id, 'job.json'), 'utf8')) as {
      parts?: { name: string }[];
    };
    assert.ok(
      (record.parts ?? []).some((p) => p.name.startsWith('part-0001')),
      `the record names part 1: ${JSON.stringify(record.parts)}`,
    );

    await engine.restart();
    const job = await waitForJob(calls, id, (j) => j.status === 'succeeded' || j.status === 'failed', 600_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const history = await openStream(`${engine.url}/v1/jobs/${id}/stream`, token);
    await history.done;
    const indices = history.events
      .map((e) => (e.event === 'result' ? partOf(e.data)?.index : undefined))
      .filter((i): i is number => i !== undefined);
    assert.ok(indices.length >= 3, `only ${indices.length} parts`);
    assert.deepEqual(indices, [...indices.keys()], 'every part announced once, in order, part 1 included');
  });
});
