import { SeedError } from './seedHttp';
import { seedOverHttp } from './seedOverHttp';

const USAGE =
  'usage: SEED_URL=http://localhost:8000 SEED_EMAIL=<staff email> SEED_PASSWORD=<password> npm run seed\n' +
  '(SEED_EMAIL and SEED_PASSWORD default to ADMIN_EMAIL and ADMIN_PASSWORD)';

/** `npm run seed`: writes the starter catalogue into a running service, through its HTTP API. */
async function main(env: NodeJS.ProcessEnv): Promise<void> {
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

main(process.env).catch((error: unknown) => {
  // A SeedError is the operator's message; anything else is a bug, shown with its stack.
  const message =
    error instanceof SeedError ? error.message : error instanceof Error ? error.stack : String(error);
  process.stderr.write(`seed failed: ${message}\n`);
  process.exit(1);
});
