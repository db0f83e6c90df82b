import { loadConfig } from '#shared/config/config';
import { createLogger } from '#shared/logging/logger';
import { openInfrastructure } from '#shared/platform/openInfrastructure';
import { SeedError } from './seedHttp';
import { seedOverHttp } from './seedOverHttp';
import { runSyntheticSeed } from './seedSynthetic/runSyntheticSeed';

const USAGE =
  'usage: SEED_URL=http://localhost:8000 SEED_EMAIL=<staff email> SEED_PASSWORD=<password> npm run seed\n' +
  '(SEED_EMAIL and SEED_PASSWORD default to ADMIN_EMAIL and ADMIN_PASSWORD)\n' +
  '   or: npm run seed -- --synthetic <N>   (N generated brains into the configured database: DATA_DIR or DATABASE_URL)';

/** At most this many synthetic brains per run. */
const MAX_SYNTHETIC = 10_000_000;

/**
 * `npm run seed`: writes the starter catalogue into a running service, through its HTTP API.
 * `npm run seed -- --synthetic N`: writes N generated brains straight into the event store.
 */
async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const flag = argv.indexOf('--synthetic');
  if (flag >= 0) return synthetic(argv[flag + 1], env);
  if (argv.length > 0) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const email = env.SEED_EMAIL || env.ADMIN_EMAIL;
  const password = env.SEED_PASSWORD || env.ADMIN_PASSWORD;
  if (!email || !password) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const url = env.SEED_URL || 'http://localhost:8000';
  const { created, existing } = await seedOverHttp({ url, email, password });
  process.stdout.write(
    `seed ${url}: created ${created}, already there ${existing}${created === 0 ? ' (nothing to do)' : ''}\n`,
  );
}

async function synthetic(text: string | undefined, env: NodeJS.ProcessEnv): Promise<void> {
  const count = /^\d+$/.test(text ?? '') ? Number(text) : NaN;
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_SYNTHETIC) {
    process.stderr.write(`--synthetic takes a number of brains from 1 to ${MAX_SYNTHETIC}\n${USAGE}\n`);
    process.exit(2);
  }
  const config = loadConfig(env);
  const logger = createLogger({ service: 'seed', level: 'warn' });
  const infra = await openInfrastructure(config, logger);
  try {
    const started = performance.now();
    let last = 0;
    const progress = (written: number) => {
      const now = performance.now();
      if (written < count && now - last < 1000) return;
      last = now;
      const seconds = (now - started) / 1000;
      const rate = written / Math.max(seconds, 0.001);
      const eta = written < count ? `, ETA ${Math.ceil((count - written) / rate)} s` : '';
      process.stderr.write(
        `seed: ${written.toLocaleString('en')} / ${count.toLocaleString('en')} brains, ${Math.round(rate).toLocaleString('en')}/s${eta}\n`,
      );
    };
    const written = await runSyntheticSeed(config, infra, logger, {
      count,
      onProgress: progress,
    });
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `seed --synthetic: ${count} brains (ids ${written.firstId}..${written.lastId}), ${written.events} events ` +
        `in ${seconds.toFixed(1)} s (${Math.round(count / seconds)} brains/s)\n`,
    );
  } finally {
    await infra.close();
  }
}

main(process.argv.slice(2), process.env).catch((error: unknown) => {
  // A SeedError is the operator's message; anything else is a bug, shown with its stack.
  const message =
    error instanceof SeedError ? error.message : error instanceof Error ? error.stack : String(error);
  process.stderr.write(`seed failed: ${message}\n`);
  process.exit(1);
});
