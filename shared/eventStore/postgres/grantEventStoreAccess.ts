import pg from 'pg';
import { APPEND_FUNCTION_ARGUMENTS } from './migrations/m0005AppendAsOwner';
import { APPEND_TO_STREAMS_ARGUMENTS } from './migrations/m0007AppendToStreams';
import type { SqlNames } from './sqlNames';

/**
 * Run by the event store's owner after migrating: gives `role` exactly what the adapter needs to
 * append (through the SECURITY DEFINER function) and read, and takes back anything else it was
 * given on the schema. It never owns, updates, deletes, truncates or alters anything there.
 */
export async function grantEventStoreAccess(
  db: Pick<pg.Pool, 'query'>,
  names: SqlNames,
  role: string,
): Promise<void> {
  const grantee = pg.escapeIdentifier(role);
  // One simple query: one transaction, so the role never sees a moment without its rights. Processes
  // started together (npm run start:cluster) grant at once: the lock makes them take turns, where
  // concurrent GRANTs on one object fail with "tuple concurrently updated".
  await db.query(`
SELECT pg_advisory_xact_lock(hashtext('catalogue:event-store-grants'));
REVOKE ALL ON ALL TABLES IN SCHEMA ${names.schema} FROM ${grantee};
REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${names.schema} FROM ${grantee};
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA ${names.schema} FROM ${grantee};
REVOKE ALL ON SCHEMA ${names.schema} FROM ${grantee};
GRANT USAGE ON SCHEMA ${names.schema} TO ${grantee};
GRANT SELECT ON ${names.events} TO ${grantee};
GRANT EXECUTE ON FUNCTION ${names.appendFunction}(${APPEND_FUNCTION_ARGUMENTS}) TO ${grantee};
GRANT EXECUTE ON FUNCTION ${names.appendToStreamsFunction}(${APPEND_TO_STREAMS_ARGUMENTS}) TO ${grantee};
`);
}
