import type fc from 'fast-check';

/** A failed property's reason and counterexample, cut short (hostile values are huge), with its seed. */
export function failureSummary<T>(report: fc.RunDetails<T>): string {
  if (!report.failed) return 'no counterexample';
  const example = JSON.stringify(report.counterexample).slice(0, 600);
  return `${String(report.errorInstance).slice(0, 600)} — seed ${report.seed}, path ${report.counterexamplePath}; counterexample: ${example}`;
}
