import type { OpenApiDocument } from '#shared/http/openapi/buildOpenApiDocument';
import type { RouteKey, RouteSpec } from '#shared/http/routeSpec';
import document from './openapi.json';

/**
 * The whole service's OpenAPI document, generated from every service's route specs by
 * `npm run openapi` (services/all-in-one/writeOpenApiDocument.ts) and kept in step by a test.
 * A service started alone serves it and answers 405 for the other services' routes with it, so
 * no service has to import another's code.
 */
export const API_DOCUMENT = document as unknown as OpenApiDocument;

const METHODS = new Set<RouteSpec['method']>(['get', 'post', 'put', 'patch', 'delete']);

/** Method and path of every operation of a document. */
export function routeKeysOf(doc: OpenApiDocument): RouteKey[] {
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.keys(operations)
      .filter((method): method is RouteSpec['method'] => METHODS.has(method as RouteSpec['method']))
      .map((method) => ({ method, path })),
  );
}
