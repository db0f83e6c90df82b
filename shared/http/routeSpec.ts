import type { Static, TSchema } from '@sinclair/typebox';
import type { Request } from 'express';
import type { Principal } from '#shared/auth/principal';
import type { GlobalPosition } from '#shared/eventStore/eventStore';

/** JSON Schema (draft 2020-12 subset that ajv and OpenAPI 3.1 both accept). */
export type JsonSchema = Record<string, unknown>;

/**
 * The body a handler receives: a TypeBox schema's static type (the schema is the object ajv
 * validates with), or the type given in its place. Distributes over `typeof Body | undefined`.
 */
export type Validated<T> = T extends TSchema ? Static<T> : T;

/** The query values a handler receives: the static type of a TypeBox `query` schema. */
export type ValidatedQuery<Q> = Q extends TSchema ? Static<Q> : Record<string, unknown>;

/** Named rate-limit buckets of decisions.md ("Limits"); 'default' applies to every request. */
export type RateLimitBucket = 'login' | 'register' | 'tokenCreate' | 'upload';

export interface RequestContext<Body = unknown, Query = Record<string, unknown>> {
  readonly req: Request;
  /**
   * The body after ajv validation. Undefined when a multipart route receives multipart/form-data
   * (the handler streams `req`); JSON or url-encoded bodies of such a route arrive validated
   * against its `multipart` schema.
   */
  readonly body: Body;
  /** Query string values after ajv validation/coercion against `query`. */
  readonly query: Query;
  readonly params: Record<string, string>;
  /** Present when the route is 'required' auth, or 'public' and a valid token was sent. */
  readonly principal: Principal | undefined;
  readonly requestId: string;
  /** Absolute base URL of this request ("http://host:port"), for links the service emits. */
  readonly baseUrl: string;
  /**
   * Aborted, with a ClientClosedRequestError, when the client closes the connection before its
   * answer was sent: work only it would read (a search statement) may stop then.
   */
  readonly signal: AbortSignal;
}

export interface Reply {
  readonly status: number;
  /** JSON-serialised unless `raw` or `json` is given. Omitted for 204. */
  readonly body?: unknown;
  /** The body already serialised as JSON (an answer kept by a cache). */
  readonly json?: string;
  readonly headers?: Record<string, string>;
  /**
   * Position of the last event this write appended. The framework waits (bounded) until the read
   * models have reached it before answering, and sends it as `X-Event-Position`.
   */
  readonly position?: GlobalPosition;
  /** Streams a download instead of JSON. */
  readonly raw?: NodeJS.ReadableStream;
}

export interface ResponseSpec {
  readonly description: string;
  readonly schema?: JsonSchema;
}

/**
 * A route. `Body` is the body's TypeBox schema (`RouteSpec<typeof AtlasBody>`), which types both
 * `body` and the handler's `ctx.body` (`| undefined` for a multipart route, whose streamed body the
 * handler reads itself), or the body's type itself; `Query` likewise for `query`.
 */
export interface RouteSpec<Body = unknown, Query extends JsonSchema = JsonSchema> {
  readonly method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI template with trailing slash, e.g. '/api/tokens/{token_id}/'. Served with and without the slash. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  /** 'public': no token needed (a sent token is still checked); 'required': 401 without a valid token. */
  readonly auth: 'public' | 'required';
  readonly rateLimit?: RateLimitBucket;
  /** JSON body schema, validated with ajv (400 with field errors). */
  readonly body?: [Exclude<Body, undefined>] extends [TSchema] ? Exclude<Body, undefined> : JsonSchema;
  /**
   * Multipart fields (documented in OpenAPI; the handler parses the stream itself so files go
   * straight to the BlobStore). When set, multipart/form-data is accepted besides JSON.
   */
  readonly multipart?: JsonSchema;
  /**
   * With `multipart`: the route takes multipart/form-data only (it carries a file), and answers 415
   * to anything else; the API document then lists no other body type.
   */
  readonly multipartOnly?: boolean;
  /** Query parameters: an object schema; values arrive as strings and are coerced by ajv. */
  readonly query?: Query;
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  readonly handler: (ctx: RequestContext<Validated<Body>, ValidatedQuery<Query>>) => Promise<Reply>;
}

/** What names a route: enough to answer 405 with Allow for a path another app serves. */
export type RouteKey = Pick<RouteSpec, 'method' | 'path'>;
