import type { Migration } from './migration';

/** The append function's signature, for ALTER / GRANT / REVOKE. */
export const APPEND_FUNCTION_ARGUMENTS = 'text, text, bigint, uuid[], text[], jsonb[], jsonb[]';

/**
 * Least privilege: the service's role is granted SELECT on the events and EXECUTE on the append
 * function, nothing else (grantEventStoreAccess). Appending therefore runs as the function's owner
 * (SECURITY DEFINER), so the one write path keeps the stream bookkeeping and the ordering lock
 * intact; the search_path is pinned so no object of the caller's can stand in for a built-in.
 * PostgreSQL grants EXECUTE on new functions to PUBLIC: taken back here.
 */
export const m0005AppendAsOwner: Migration = {
  version: 5,
  name: 'append as the owner; nothing for PUBLIC',
  sql: ({ schema, appendFunction }) => `
ALTER FUNCTION ${appendFunction}(${APPEND_FUNCTION_ARGUMENTS})
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION ${appendFunction}(${APPEND_FUNCTION_ARGUMENTS}) FROM PUBLIC;
REVOKE ALL ON FUNCTION ${schema}.previous_append(text, uuid[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION ${schema}.forbid_event_changes() FROM PUBLIC;
`,
};
