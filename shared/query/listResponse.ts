import { Type } from '@sinclair/typebox';
import type { RequestContext, Reply } from '#shared/http/routeSpec';
import { NotFoundError } from '#shared/errors/httpErrors';

/** decisions.md "Lists": array (≤ 1000, Link + X-Total-Count) without paging params, envelope with them. */
export const UNPAGED_MAX = 1000;
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export const listQueryProperties = {
  // int64: a page number never reaches an integer column; one beyond the last page is 404 however large.
  page: Type.Optional(
    Type.Integer({
      format: 'int64',
      minimum: 1,
      description: 'Page number (1-based). Switches the response to {count, next, previous, results}.',
    }),
  ),
  page_size: Type.Optional(
    Type.Integer({
      format: 'int64',
      minimum: 1,
      description: `Items per page (default ${DEFAULT_PAGE_SIZE}, larger than ${MAX_PAGE_SIZE} is clamped).`,
    }),
  ),
  ordering: Type.Optional(Type.String({ description: 'Comma-separated fields, "-" prefix for descending.' })),
};

export interface Window {
  readonly limit: number;
  readonly offset: number;
}

export interface ListSource<Item> {
  count(): Promise<number>;
  fetch(window: Window): Promise<Item[]>;
}

function pageUrl(ctx: RequestContext, page: number, pageSize: number): string {
  const url = new URL(ctx.req.originalUrl, ctx.baseUrl);
  url.searchParams.set('page', String(page));
  url.searchParams.set('page_size', String(pageSize));
  return url.toString();
}

export async function listReply<Item>(ctx: RequestContext, source: ListSource<Item>): Promise<Reply> {
  const page = ctx.query.page as number | undefined;
  const requestedSize = ctx.query.page_size as number | undefined;
  const paged = page !== undefined || requestedSize !== undefined;
  const count = await source.count();
  if (!paged) {
    const results = await source.fetch({ limit: UNPAGED_MAX, offset: 0 });
    const headers: Record<string, string> = { 'X-Total-Count': String(count) };
    if (count > UNPAGED_MAX) headers.Link = `<${pageUrl(ctx, 2, UNPAGED_MAX)}>; rel="next"`;
    return { status: 200, body: results, headers };
  }
  const pageSize = Math.min(requestedSize ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const current = page ?? 1;
  const lastPage = Math.max(1, Math.ceil(count / pageSize));
  if (current > lastPage) throw new NotFoundError('Invalid page.');
  const results = await source.fetch({ limit: pageSize, offset: (current - 1) * pageSize });
  return {
    status: 200,
    body: {
      count,
      next: current < lastPage ? pageUrl(ctx, current + 1, pageSize) : null,
      previous: current > 1 ? pageUrl(ctx, current - 1, pageSize) : null,
      results,
    },
    headers: { 'X-Total-Count': String(count) },
  };
}

/**
 * Turns `ordering=-created_at,name` into an ORDER BY clause over an allow-list of
 * API field → SQL column (the allow-list is what keeps it injection-free), always ending with a unique tiebreaker so pages are stable.
 */
export function orderBy(
  ordering: unknown,
  columns: Readonly<Record<string, string>>,
  fallback: string,
  tiebreaker: string,
): string {
  if (typeof ordering !== 'string' || ordering.trim() === '') return `${fallback}, ${tiebreaker}`;
  // Like DRF's OrderingFilter, fields that cannot be ordered by are ignored.
  const parts = ordering
    .split(',')
    .map((f) => f.trim())
    .flatMap((field) => {
      const desc = field.startsWith('-');
      const name = desc ? field.slice(1) : field;
      // Own properties only: "constructor" or "__proto__" must not find Object.prototype's.
      const column = Object.hasOwn(columns, name) ? columns[name] : undefined;
      return column ? [`${column} ${desc ? 'DESC' : 'ASC'}`] : [];
    });
  return parts.length === 0 ? `${fallback}, ${tiebreaker}` : `${parts.join(', ')}, ${tiebreaker}`;
}

/** The 200 schema of a list route: an array, or the envelope when page or page_size is given. */
export function listResponseSchema(item: Readonly<Record<string, unknown>>) {
  return {
    oneOf: [
      { type: 'array', items: item },
      {
        type: 'object',
        required: ['count', 'next', 'previous', 'results'],
        properties: {
          count: { type: 'integer' },
          next: { type: ['string', 'null'], format: 'uri' },
          previous: { type: ['string', 'null'], format: 'uri' },
          results: { type: 'array', items: item },
        },
      },
    ],
  };
}
