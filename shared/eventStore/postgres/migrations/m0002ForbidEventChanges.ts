import type { Migration } from './migration';

/** Events are never changed in place (architecture.md, guarantee 4): corrections are new events. */
export const m0002ForbidEventChanges: Migration = {
  version: 2,
  name: 'forbid updating or deleting events',
  sql: ({ schema, events }) => `
CREATE FUNCTION ${schema}.forbid_event_changes() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION 'events are immutable: % is not allowed on %', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'restrict_violation';
END;
$fn$;

CREATE TRIGGER events_are_immutable
  BEFORE UPDATE OR DELETE ON ${events}
  FOR EACH ROW EXECUTE FUNCTION ${schema}.forbid_event_changes();
`,
};
