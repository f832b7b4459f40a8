// The test runner that VS Code loads in its extension host (extensionTestsPath). Suites are bundled into this file
// by scripts/test-all.mjs; mocha itself stays external and is required from the repo's node_modules.
import { appendFileSync, writeFileSync } from 'node:fs';
import Mocha from 'mocha';

interface TestResult {
  title: string;
  state: 'passed' | 'failed';
  durationMs?: number;
  error?: string;
}

const PREFIX = '[article-audio-test]';

/**
 * The remote extension host's console does not reach the browser, so progress goes to a file that the launcher
 * (test/support/code-server-launcher.mjs) follows and prints.
 */
function report(line: string): void {
  const file = process.env.ARTICLE_AUDIO_TEST_LOG;
  if (file) appendFileSync(file, `${line}\n`);
  else console.log(`${PREFIX} ${line}`);
}

/** Reports each test as it ends, and the totals to ARTICLE_AUDIO_TEST_RESULTS. */
class ConsoleReporter extends Mocha.reporters.Base {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
    super(runner, options);
    const results: TestResult[] = [];
    runner.on(Mocha.Runner.constants.EVENT_TEST_PASS, (test: Mocha.Test) => {
      results.push({ title: test.fullTitle(), state: 'passed', durationMs: test.duration });
      report(`  ✔ ${test.fullTitle()} (${test.duration ?? 0} ms)`);
    });
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, (test: Mocha.Test, error: Error) => {
      results.push({ title: test.fullTitle(), state: 'failed', error: error.stack ?? String(error) });
      report(`  ✖ ${test.fullTitle()}\n      ${(error.stack ?? String(error)).split('\n').join('\n      ')}`);
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const passed = results.filter((r) => r.state === 'passed').length;
      const failed = results.length - passed;
      report(`integration: ${passed} passed, ${failed} failed`);
      const file = process.env.ARTICLE_AUDIO_TEST_RESULTS;
      if (file) writeFileSync(file, JSON.stringify({ passed, failed, results }, null, 2));
    });
  }
}

export async function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    timeout: 120_000,
    reporter: ConsoleReporter,
    grep: process.env.ARTICLE_AUDIO_TEST_GREP,
  });
  mocha.suite.emit(Mocha.Suite.constants.EVENT_FILE_PRE_REQUIRE, globalThis, 'integration', mocha);
  // Loaded after pre-require so that the suites' describe/it calls register with this mocha instance.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('./suites');
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} integration test(s) failed`);
}
