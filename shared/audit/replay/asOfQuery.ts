import { Type } from '@sinclair/typebox';
import { AS_OF_MESSAGE } from '#shared/audit/asOf';

/** The `as_of` query parameter of a detail route (decisions.md "Audit", As of). */
export const asOfQueryProperty = Type.Optional(
  Type.String({
    maxLength: 64,
    description: `The resource as it was right after the last event at or before this point, computed by replay: an ISO 8601 time or an event position (X-Event-Position of a write). The answer's X-As-Of-Position names the newest event it stands on; 404 if the resource did not exist then; a future time is the current state. ${AS_OF_MESSAGE}`,
  }),
);
