import type { JsonSchema, RouteSpec } from '#shared/http/routeSpec';
import { DEFAULT_API_DESCRIPTION } from './apiDescription';
import { OPENAPI_COMPONENTS, STANDARD_RESPONSES, WRITE_RESPONSES } from './openApiComponents';
import { publishedSchema } from './publishedSchema';
import { HealthReport } from '#shared/http/system/healthChecks';
import { SYSTEM_PATHS } from './systemOperations';

export interface OpenApiInfo {
  readonly title: string;
  readonly version: string;
  /** Markdown; defaults to DEFAULT_API_DESCRIPTION (the cross-cutting rules). */
  readonly description?: string;
}

export type OpenApiDocument = Record<string, unknown> & {
  readonly openapi: string;
  readonly paths: Record<string, Record<string, unknown>>;
};

const PARAM = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const TOKEN_SECURITY = [{ Token: [] }, { Bearer: [] }];
/** An empty requirement first: the token is optional on public operations. */
const OPTIONAL_SECURITY = [{}, ...TOKEN_SECURITY];
const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete']);
const BODY_METHODS = new Set(['post', 'put', 'patch']);
const IDEMPOTENCY_KEY = { $ref: '#/components/parameters/IdempotencyKey' };

function withSlash(path: string): string {
  return path.endsWith('/') ? path : `${path}/`;
}

function parameters(route: RouteSpec): Record<string, unknown>[] {
  const path = [...route.path.matchAll(PARAM)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const properties = (route.query?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((route.query?.required ?? []) as string[]);
  const query = Object.entries(properties).map(([name, schema]) => ({
    name,
    in: 'query',
    required: required.has(name),
    ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
    schema,
  }));
  return [...path, ...query, ...(WRITE_METHODS.has(route.method) ? [IDEMPOTENCY_KEY] : [])];
}

function requestBody(route: RouteSpec): Record<string, unknown> | undefined {
  const json = route.body ?? route.multipart;
  if (!json) return undefined;
  // Documented as accepted only where it is: a file-carrying route refuses JSON and forms (415).
  if (route.multipartOnly && route.multipart)
    return { required: true, content: { 'multipart/form-data': { schema: route.multipart } } };
  const content: Record<string, { schema: JsonSchema }> = { 'application/json': { schema: json } };
  if (route.multipart) {
    content['multipart/form-data'] = { schema: route.multipart };
    content['application/x-www-form-urlencoded'] = { schema: withoutFileParts(route.multipart) };
  }
  const required = Array.isArray(json.required) && json.required.length > 0;
  return { required, content };
}

/** A url-encoded body cannot carry a file: the multipart schema without its binary parts. */
function withoutFileParts(schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!properties) return schema;
  const files = Object.keys(properties).filter((name) => properties[name]?.format === 'binary');
  if (files.length === 0) return schema;
  const kept = Object.fromEntries(Object.entries(properties).filter(([name]) => !files.includes(name)));
  const required = Array.isArray(schema.required)
    ? (schema.required as string[]).filter((name) => !files.includes(name))
    : undefined;
  return { ...schema, properties: kept, ...(required ? { required } : {}) };
}

function responses(route: RouteSpec): Record<string, unknown> {
  const declared: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const binary = spec.schema?.format === 'binary';
    const mediaType = binary ? 'application/octet-stream' : 'application/json';
    declared[status] = {
      description: spec.description,
      ...(spec.schema ? { content: { [mediaType]: { schema: spec.schema } } } : {}),
    };
  }
  // Any request may be 400 (a credential header sent twice); one with a body may stall (408).
  const standard: Record<string, unknown> = {
    400: STANDARD_RESPONSES[400],
    401: STANDARD_RESPONSES[401],
    ...(BODY_METHODS.has(route.method) ? { 408: STANDARD_RESPONSES[408] } : {}),
    429: STANDARD_RESPONSES[429],
    500: STANDARD_RESPONSES[500],
  };
  if (WRITE_METHODS.has(route.method)) Object.assign(standard, WRITE_RESPONSES);
  return { ...standard, ...declared };
}

function operation(route: RouteSpec): Record<string, unknown> {
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [...route.tags],
    parameters: parameters(route),
    ...(requestBody(route) ? { requestBody: requestBody(route) } : {}),
    responses: responses(route),
    security: route.auth === 'required' ? TOKEN_SECURITY : OPTIONAL_SECURITY,
    ...(route.rateLimit ? { 'x-rate-limit-bucket': route.rateLimit } : {}),
  };
}

/**
 * The OpenAPI 3.1 document of a route list, from the same JSON Schemas ajv validates with. The
 * all-in-one passes both apps' routes; system endpoints are added unless told otherwise.
 */
export function buildOpenApiDocument(
  routes: readonly RouteSpec[],
  info: OpenApiInfo,
  options: { includeSystemPaths?: boolean; servers?: readonly { url: string; description?: string }[] } = {},
): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags: string[] = [];
  for (const route of routes) {
    (paths[withSlash(route.path)] ??= {})[route.method] = publishedSchema(operation(route));
    for (const tag of route.tags) if (!tags.includes(tag)) tags.push(tag);
  }
  const includeSystem = options.includeSystemPaths ?? true;
  if (includeSystem) Object.assign(paths, SYSTEM_PATHS);
  if (includeSystem && !tags.includes('system')) tags.push('system');
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: info.title,
      version: info.version,
      description: info.description ?? DEFAULT_API_DESCRIPTION,
    },
    ...(options.servers ? { servers: options.servers } : {}),
    tags: tags.map((name) => ({ name })),
    paths,
    components: {
      ...OPENAPI_COMPONENTS,
      schemas: { ...OPENAPI_COMPONENTS.schemas, HealthReport: publishedSchema(HealthReport) },
    },
  };
}
