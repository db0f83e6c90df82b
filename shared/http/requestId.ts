import { randomUUID } from 'node:crypto';

/** Ids from clients and proxies are echoed into headers and logs: keep them short and inert. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : randomUUID();
}
