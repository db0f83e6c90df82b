import { type Static, Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { PermissionDeniedError } from '#shared/errors/httpErrors';
import { LEDGER_ALGORITHM } from '#shared/audit/ledgerChain';
import { readLedgerHead } from '#shared/audit/ledgerHead';
import { Nullable } from '#shared/views/nullable';
import type { QueryDeps } from '#services/query-api/queryDeps';

export const ledgerHeadSchema = Type.Object(
  {
    position: Nullable(
      Type.String({
        description: "The newest chained event's position (as in X-Event-Position); null when none.",
      }),
    ),
    count: Type.Integer({ minimum: 0, description: 'Events chained, in global order.' }),
    hash: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: 'The chain hash after that event, lowercase hex (64 zeros when no event is chained).',
    }),
    algorithm: Type.Literal(LEDGER_ALGORITHM),
  },
  { additionalProperties: false },
);

export type LedgerHeadJson = Static<typeof ledgerHeadSchema>;

export const ledgerRoute = (deps: QueryDeps): RouteSpec => ({
  method: 'get',
  path: '/api/audit/ledger/',
  operationId: 'auditLedgerHead',
  summary: 'The head of the tamper-evident ledger (staff)',
  description:
    'Every event is chained in global order: hash_n = SHA-256(hash_{n-1} ‖ canonical bytes of event n), hash_0 = 32 zero bytes; the canonical bytes are the RFC 8785 form of the stored event (id, type, stream, revision, data, metadata). Answers the newest chained event: keep a copy of this head outside the service (the projector also logs it), and `npm run verify-ledger` recomputes the chain from the events and names the first event altered, removed or inserted.',
  tags: ['audit'],
  auth: 'required',
  responses: {
    200: { description: 'The ledger head', schema: ledgerHeadSchema },
    403: { description: 'Not staff' },
  },
  async handler(ctx) {
    if (!ctx.principal!.isStaff) throw new PermissionDeniedError('Only staff may read the ledger.');
    const head = await readLedgerHead(deps.readModels);
    const body: LedgerHeadJson = {
      position: head.position,
      count: head.count,
      hash: head.hash.toString('hex'),
      algorithm: LEDGER_ALGORITHM,
    };
    return { status: 200, body };
  },
});
