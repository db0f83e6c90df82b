import path from 'node:path';
import { startBareApp } from './bareApp';
import type { BenchPostgres } from './benchPostgres';
import { benchAccount, startBenchService } from './benchService';
import type { Cleanup } from './cleanup';
import { percent, perSecond, type Figure } from './figure';
import {
  generateLoad,
  stopLoadGenerators,
  type LoadRequest,
  type LoadResult,
  checked,
  summarise,
} from './loadGenerator';
import { printDetail, printFigure, printSection } from './report';

const ME = '/api/auth/me/';

export interface HttpPlan {
  readonly rounds: number;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmUpSeconds: number;
}

/**
 * Authenticated GET /api/auth/me/ through the real all-in-one next to a bare Express app serving
 * the same JSON, alternating the two (order swapped each round) so machine noise hits both alike.
 */
export async function measureMeEndpoint(
  pg: BenchPostgres,
  cleanup: Cleanup,
  plan: HttpPlan,
): Promise<Figure[]> {
  printSection(
    `GET ${ME}: all-in-one vs bare Express (autocannon in a child process, ${plan.connections} connections × ${plan.durationSeconds} s, ${plan.rounds} rounds)`,
  );
  cleanup.defer('load generators', stopLoadGenerators);
  const service = await startBenchService(
    await pg.createDatabase('bench_http'),
    path.join(pg.scratchDir, 'http'),
  );
  const closeService = cleanup.defer('all-in-one', () => service.close());
  const { token, me } = await benchAccount(service.url);
  const bare = await startBareApp(me, ME);
  const closeBare = cleanup.defer('bare app', () => bare.close());

  const targets = {
    service: { url: `${service.url}${ME}`, headers: { authorization: `Token ${token}` } },
    bare: { url: `${bare.url}${ME}`, headers: {} },
  };
  const run = (target: Pick<LoadRequest, 'url' | 'headers'>, durationSeconds: number) =>
    generateLoad({ ...target, connections: plan.connections, durationSeconds }).then(checked);
  await run(targets.service, plan.warmUpSeconds);
  await run(targets.bare, plan.warmUpSeconds);

  const serviceRps: number[] = [];
  const bareRps: number[] = [];
  for (let i = 0; i < plan.rounds; i++) {
    const order = i % 2 === 0 ? (['service', 'bare'] as const) : (['bare', 'service'] as const);
    const results: Partial<Record<'service' | 'bare', LoadResult>> = {};
    for (const name of order) results[name] = await run(targets[name], plan.durationSeconds);
    serviceRps.push(results.service!.requestsPerSecond);
    bareRps.push(results.bare!.requestsPerSecond);
    printDetail(
      `round ${i + 1}: all-in-one ${summarise(results.service!)}; bare ${summarise(results.bare!)}`,
    );
  }
  await closeBare();
  await closeService();
  return report(serviceRps, bareRps);
}

function report(serviceRps: number[], bareRps: number[]): Figure[] {
  const figures: Figure[] = [
    {
      name: `all-in-one GET ${ME} (authenticated)`,
      rounds: serviceRps,
      unit: perSecond('req'),
      target: undefined,
    },
    { name: `bare Express GET ${ME}`, rounds: bareRps, unit: perSecond('req'), target: undefined },
    {
      name: 'all-in-one / bare Express',
      rounds: serviceRps.map((s, i) => s / bareRps[i]!),
      unit: percent,
      // Issue 22's target (it was 50 % before).
      target: { kind: 'at least', value: 0.85 },
    },
  ];
  figures.forEach(printFigure);
  return figures;
}
