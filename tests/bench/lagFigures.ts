import type { BenchPostgres } from './benchPostgres';
import type { Cleanup } from './cleanup';
import { milliseconds, withUnit, type Figure } from './figure';
import { startLagBench } from './lagBench';
import { printDetail, printFigure, printSection } from './report';

/** Issue 22's target, at 1,000 writes/s. */
const TARGET_P99_MS = 10;

/** Projection lag p50/p99 at a steady write rate, one sample per round. */
export async function measureProjectionLag(
  pg: BenchPostgres,
  cleanup: Cleanup,
  plan: { rounds: number; roundMs: number; rate: number },
): Promise<Figure[]> {
  printSection(
    `projection lag: ProjectionRunner + all projections, ${plan.rate} writes/s, ${plan.rounds} rounds of ${plan.roundMs / 1000} s`,
  );
  const bench = await startLagBench(await pg.createDatabase('bench_projection'));
  const closeBench = cleanup.defer('projection bench', () => bench.close());
  const p50: number[] = [];
  const p99: number[] = [];
  for (let i = 0; i < plan.rounds; i++) {
    const round = await bench.round(plan.rate, plan.roundMs);
    printDetail(
      `round ${i + 1}: ${round.writes} writes at ${round.achievedRate.toFixed(0)}/s, p50 ${withUnit(milliseconds, round.p50)}, p99 ${withUnit(milliseconds, round.p99)}`,
    );
    p50.push(round.p50);
    p99.push(round.p99);
  }
  await closeBench();
  const figures: Figure[] = [
    {
      name: `projection lag p50 @ ${plan.rate} writes/s`,
      rounds: p50,
      unit: milliseconds,
      target: undefined,
    },
    {
      name: `projection lag p99 @ ${plan.rate} writes/s`,
      rounds: p99,
      unit: milliseconds,
      target: { kind: 'at most', value: TARGET_P99_MS },
    },
  ];
  figures.forEach(printFigure);
  return figures;
}
