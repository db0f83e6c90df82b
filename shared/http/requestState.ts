import type { Request } from 'express';
import type { Principal } from '#shared/auth/principal';
import { UNMATCHED_ROUTE } from '#shared/metrics/metrics';

/** What the framework learns about a request while handling it; read when the response closes. */
export interface RequestState {
  readonly requestId: string;
  readonly startedAt: number;
  /** Route template for metrics and logs; UNMATCHED_ROUTE until a route matches. */
  route: string;
  principal: Principal | undefined;
}

const STATE = Symbol('apiRequestState');

type StatefulRequest = Request & { [STATE]?: RequestState };

export function attachRequestState(req: Request, requestId: string, startedAt: number): RequestState {
  const state: RequestState = { requestId, startedAt, route: UNMATCHED_ROUTE, principal: undefined };
  (req as StatefulRequest)[STATE] = state;
  return state;
}

export function requestStateOf(req: Request): RequestState | undefined {
  return (req as StatefulRequest)[STATE];
}
