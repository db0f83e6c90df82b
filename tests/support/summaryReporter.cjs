/**
 * The run's totals in the plain form CI reads: "N passed, N failed" (", N skipped" when any were
 * skipped; skipped tests are never counted as passed). Jest's own summary prints after every custom
 * reporter, so the line is handed to globalTeardown, which runs last, to print.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `${results.numPassedTests} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;
    globalThis.__catalogueSummaryLine = line;
  }
}

module.exports = SummaryReporter;
