import type { Request, Response } from 'express';
import type { Principal } from '#shared/auth/principal';
import { ClientClosedRequestError } from '#shared/errors/httpErrors';
import type { RequestContext } from './routeSpec';

/** RequestContext with baseUrl and signal computed only when a handler asks for them (most never do). */
export class ApiRequestContext<Body> implements RequestContext<Body> {
  private abandoned: AbortController | undefined;

  constructor(
    readonly req: Request,
    private readonly res: Response,
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

  get signal(): AbortSignal {
    if (!this.abandoned) {
      const controller = (this.abandoned = new AbortController());
      const res = this.res;
      // The response closes once it is sent, or earlier when the connection goes: only the latter aborts.
      if (res.closed) {
        if (!res.writableFinished) controller.abort(new ClientClosedRequestError());
      } else
        res.once('close', () => {
          if (!res.writableFinished) controller.abort(new ClientClosedRequestError());
        });
    }
    return this.abandoned.signal;
  }
}
