import pg from 'pg';
import { createTestDatabase } from '#tests/support/testPostgres';
import { heardClientErrors } from './heardClientErrors';

let url: string;
let admin: pg.Pool;

beforeAll(async () => {
  url = await createTestDatabase('heard_errors');
  admin = new pg.Pool({ connectionString: url });
});
afterAll(async () => {
  await admin.end();
});

/**
 * A client of a guarded pool, checked out with no listener of its own, its backend terminated while
 * no statement runs. Unheard, the server's goodbye is thrown from the socket's data handler and ends
 * the process (under jest: the test fails with "Unhandled error ... terminating connection due to
 * administrator command", as it does with the pool left unguarded).
 */
test('a held client whose connection dies between statements does not end the process', async () => {
  const lost: Error[] = [];
  const pool = heardClientErrors(new pg.Pool({ connectionString: url, max: 2 }), (error) => lost.push(error));
  try {
    const client = await pool.connect();
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const ended = new Promise<void>((resolve) => {
      const bound = setTimeout(resolve, 5000);
      client.once('end', () => {
        clearTimeout(bound);
        resolve();
      });
    });
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    await ended;
    expect(lost.map((error) => error.message)).toContain(
      'terminating connection due to administrator command',
    );
    // Its holder learns of it at its next statement; given back, the dead client is dropped.
    await expect(client.query('SELECT 1')).rejects.toThrow();
    client.release();
    await expect(pool.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
  } finally {
    await pool.end();
  }
});
