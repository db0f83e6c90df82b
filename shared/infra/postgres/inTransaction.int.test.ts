import pg from 'pg';
import { createTestDatabase } from '#tests/support/testPostgres';
import { inTransaction } from './inTransaction';

let pool: pg.Pool;
let admin: pg.Pool;

beforeAll(async () => {
  const url = await createTestDatabase('in_tx');
  pool = new pg.Pool({ connectionString: url });
  admin = new pg.Pool({ connectionString: url });
});
afterAll(async () => {
  await pool.end();
  await admin.end();
});

test('a connection killed between two statements fails the transaction instead of crashing the process', async () => {
  let uncaught: unknown;
  const onUncaught = (error: unknown): void => void (uncaught = error);
  process.on('uncaughtException', onUncaught);
  try {
    const attempt = inTransaction(pool, async (client) => {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      // The server's goodbye arrives while no statement runs: an 'error' event on the client.
      // (Bounded: where the event goes unheard, pg throws before it announces 'end'.)
      await new Promise<void>((resolve) => {
        const bound = setTimeout(resolve, 10_000);
        client.once('end', () => {
          clearTimeout(bound);
          resolve();
        });
      });
      await client.query('SELECT 1');
    });
    await expect(attempt).rejects.toThrow();
    expect(uncaught).toBeUndefined();
    // The dead client was discarded, not handed out again.
    await expect(inTransaction(pool, (client) => client.query('SELECT 1'))).resolves.toBeDefined();
  } finally {
    process.off('uncaughtException', onUncaught);
  }
});
