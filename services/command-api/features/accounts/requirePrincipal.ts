import type { Principal } from '#shared/auth/principal';
import { AuthenticationError } from '#shared/errors/httpErrors';
import type { RequestContext } from '#shared/http/routeSpec';

/** Routes declared auth 'required' always have a principal; this narrows the type. */
export function requirePrincipal(ctx: RequestContext<unknown>): Principal {
  if (!ctx.principal) throw new AuthenticationError();
  return ctx.principal;
}
