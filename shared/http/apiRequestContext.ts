import type { Request } from 'express';
import type { Principal } from '#shared/auth/principal';
import type { RequestContext } from './routeSpec';

/** RequestContext with baseUrl computed only when a handler asks for it (most never do). */
export class ApiRequestContext<Body> implements RequestContext<Body> {
  constructor(
    readonly req: Request,
    readonly body: Body,
    readonly query: Record<string, unknown>,
    readonly params: Record<string, string>,
    readonly principal: Principal | undefined,
    readonly requestId: string,
    private readonly linkBase: (req: Request) => string,
  ) {}

  get baseUrl(): string {
    return this.linkBase(this.req);
  }
}
