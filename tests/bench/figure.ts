import { spread } from './stats';

/** One reported figure: its value per round, how to print it, and the target it is held against. */
export interface Figure {
  readonly name: string;
  readonly rounds: readonly number[];
  readonly unit: Unit;
  readonly target: { readonly kind: 'at least' | 'at most'; readonly value: number } | undefined;
}

export interface Unit {
  readonly suffix: string;
  readonly format: (value: number) => string;
}

export type Verdict = 'PASS' | 'MISS' | 'info';

/** The median decides: single rounds on a noisy machine do not. */
export function verdict(figure: Figure): Verdict {
  const { target } = figure;
  if (!target) return 'info';
  const { median } = spread(figure.rounds);
  const met = target.kind === 'at least' ? median >= target.value : median <= target.value;
  return met ? 'PASS' : 'MISS';
}

export const withUnit = (unit: Unit, value: number): string => `${unit.format(value)} ${unit.suffix}`;

export function describeTarget({ target, unit }: Figure): string {
  if (!target) return '-';
  return `${target.kind === 'at least' ? '≥' : '≤'} ${withUnit(unit, target.value)}`;
}

export function describeSpread({ rounds, unit }: Figure): { median: string; range: string } {
  const s = spread(rounds);
  return { median: withUnit(unit, s.median), range: `${unit.format(s.min)}–${unit.format(s.max)}` };
}

const grouped = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
export const perSecond = (what: string): Unit => ({ suffix: `${what}/s`, format: (n) => grouped.format(n) });
export const milliseconds: Unit = { suffix: 'ms', format: (n) => n.toFixed(1) };
/** Values are ratios; printed as percentages. */
export const percent: Unit = { suffix: '%', format: (n) => (n * 100).toFixed(0) };
