import type { IncomingMessage } from 'node:http';
import { BadRequestError } from '#shared/errors/httpErrors';

/** Headers that carry credentials: Node keeps only the first of each in req.headers. */
const CREDENTIAL_HEADERS: Readonly<Record<string, string>> = {
  authorization: 'Authorization',
  'proxy-authorization': 'Proxy-Authorization',
};

/**
 * The request's one Authorization header (undefined when there is none). A credential header sent
 * more than once is refused with 400: Node would keep the first, a proxy in front may read the last,
 * and the two would authorize different users. req.rawHeaders still holds every copy, in any case.
 */
export function authorizationHeaderOf(req: IncomingMessage): string | undefined {
  const seen = new Map<string, number>();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!Object.hasOwn(CREDENTIAL_HEADERS, name)) continue;
    const count = (seen.get(name) ?? 0) + 1;
    if (count > 1)
      throw new BadRequestError(
        `Send the ${CREDENTIAL_HEADERS[name]} header once; this request has it more than once.`,
      );
    seen.set(name, count);
  }
  return req.headers.authorization;
}
