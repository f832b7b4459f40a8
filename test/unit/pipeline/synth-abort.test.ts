// A cancelled job's lines: asking the synthesis pool (and the built-in voice over it) for a line once the job's signal
// is aborted gives a rejected promise, never an exception thrown at the call. speak() asks for lines from a callback
// once a job's first part is cut (src/speech/index.ts, fill()); a throw there was an unhandled rejection that ended
// the engine when a job was cancelled while its first part's last line was in the audio thread (found in the
// integration suite: "PipelineError: The job was cancelled" at WorkerLoop.abandon, exit code 1).
import * as assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { PipelineError } from '../../../src/speech/types';
import { FliteVoice } from '../../../src/speech/voice/flite-voice';
import { SynthesisPool } from '../../../src/speech/voice/synth-pool';

describe('synthesis asked for after a job is cancelled', () => {
  const pool = new SynthesisPool(1);
  after(() => pool.close());

  function cancelled(): AbortSignal {
    const controller = new AbortController();
    controller.abort(new PipelineError('cancelled', 'The job was cancelled.'));
    return controller.signal;
  }

  it('the pool rejects with the signal’s reason instead of throwing', async () => {
    const signal = cancelled();
    let result: Promise<unknown> | undefined;
    assert.doesNotThrow(() => {
      result = pool.synthesize('A line after the job was cancelled.', 'kal16', { signal });
    });
    await assert.rejects(result!, (error) => error === signal.reason);
  });

  it('so does the built-in voice', async () => {
    const signal = cancelled();
    const speaker = new FliteVoice(pool, { name: 'test', flite: 'kal16' });
    let result: Promise<unknown> | undefined;
    assert.doesNotThrow(() => {
      result = speaker.speak({ text: 'A line after the job was cancelled.' }, signal);
    });
    await assert.rejects(result!, (error) => error === signal.reason);
  });
});
