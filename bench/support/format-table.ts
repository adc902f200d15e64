import type { Figure } from './figure.js';
import type { Spread } from './spread.js';

const cell = (s: Spread | undefined) => (s ? `${s.p50} (${s.p10}–${s.p90})` : '—');
const CONTEXT = [
  'latencyMs',
  'chunkMs',
  'modelReply',
  'clients',
  'client',
  'runners',
  'depth',
  'parked',
  'tsx',
] as const;

/** The figures as a Markdown table: p50 with p10–p90 per side, ratio, target and verdict. */
export function formatTable(figures: Figure[]): string {
  const rows = figures.map((f) => {
    const context = CONTEXT.filter((k) => f[k] !== undefined)
      .map((k) => `${k}=${f[k]}`)
      .join(', ');
    const verdict = f.ok === undefined ? '' : f.ok ? '✓' : '✗';
    const toIdeal = f.ratioToIdeal === undefined ? '' : ` (${f.ratioToIdeal} × ideal)`;
    const ratio = `${f.ratio ?? ''}${toIdeal}`;
    return `| ${f.figure}${context ? ` (${context})` : ''} | ${f.unit} | ${cell(f.mesh)} | ${cell(f.sdk)} | ${ratio} | ${f.target ?? ''} | ${verdict} |`;
  });
  return [
    '| figure | unit | mesh p50 (p10–p90) | SDK p50 (p10–p90) | ratio | target | ok |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
