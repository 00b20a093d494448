// Prints one plain closing line, `Tests: N passed, N failed, N skipped`, after vitest's own summary, so tools that
// read a run's last line (CI) see the counts without parsing vitest's colored output.
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // a file that failed to load has no tests to count; it still fails the run
      if (m.state() === 'failed' && [...m.children.allTests()].length === 0) failed++;
    }
    failed += unhandledErrors.length;
    // after vitest's default reporter, on its own line
    setImmediate(() => process.stdout.write(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`));
  }
}
