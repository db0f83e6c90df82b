import { Readable } from 'node:stream';
import type { Authenticator, Principal } from '#shared/auth/principal';
import { AuthenticationError } from '#shared/errors/httpErrors';
import type { RouteSpec } from '#shared/http/routeSpec';

export const alice: Principal = {
  userId: 1,
  username: 'alice',
  email: 'a@example.org',
  isStaff: false,
  tokenId: 't1',
  tokenKind: 'login',
};
export const bob: Principal = {
  userId: 2,
  username: 'bob',
  email: 'b@example.org',
  isStaff: false,
  tokenId: 't2',
  tokenKind: 'personal',
};

/** "Token alice" / "Bearer bob" are valid; any other header is a bad token. */
export const fakeAuthenticator: Authenticator = {
  authenticate(header) {
    if (header === undefined) return Promise.resolve(undefined);
    if (header === 'Token alice') return Promise.resolve(alice);
    if (header === 'Bearer bob') return Promise.resolve(bob);
    return Promise.reject(new AuthenticationError('Invalid token.'));
  },
};

const widgetBody = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    size: { type: 'integer', minimum: 1 },
    color: { type: 'string', pattern: '^#[0-9a-f]{6}$', 'x-error-message': 'Enter a valid hex colour.' },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['name'],
};

async function drain(stream: NodeJS.ReadableStream): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream) bytes += (chunk as Buffer).length;
  return bytes;
}

export const demoRoutes: RouteSpec[] = [
  {
    method: 'post',
    path: '/api/widgets/',
    operationId: 'createWidget',
    summary: 'Create a widget',
    tags: ['widgets'],
    auth: 'public',
    body: widgetBody,
    responses: { 201: { description: 'Created.', schema: widgetBody } },
    handler: (ctx) =>
      Promise.resolve({
        status: 201,
        body: { ...(ctx.body as object), user: ctx.principal?.userId ?? null },
        position: { commit: 7n, prepare: 42n },
      }),
  },
  {
    method: 'get',
    path: '/api/widgets/',
    operationId: 'listWidgets',
    summary: 'List widgets',
    tags: ['widgets'],
    auth: 'public',
    query: {
      type: 'object',
      properties: {
        page: { type: 'integer', minimum: 1 },
        verified: { type: 'boolean' },
        search: { type: 'string', description: 'Name contains.' },
      },
    },
    responses: { 200: { description: 'Widgets.' } },
    handler: (ctx) =>
      Promise.resolve({
        status: 200,
        body: {
          query: ctx.query,
          user: ctx.principal?.userId ?? null,
          baseUrl: ctx.baseUrl,
          requestId: ctx.requestId,
        },
      }),
  },
  {
    method: 'get',
    path: '/api/widgets/{widget_id}/',
    operationId: 'getWidget',
    summary: 'One widget',
    tags: ['widgets'],
    auth: 'public',
    responses: { 200: { description: 'The widget.' } },
    handler: (ctx) =>
      Promise.resolve({ status: 200, body: { id: ctx.params.widget_id }, headers: { ETag: 'W/"3"' } }),
  },
  {
    method: 'delete',
    path: '/api/widgets/{widget_id}/',
    operationId: 'deleteWidget',
    summary: 'Delete a widget',
    tags: ['widgets'],
    auth: 'required',
    responses: { 204: { description: 'Deleted.' } },
    handler: () => Promise.resolve({ status: 204, body: { ignored: true } }),
  },
  {
    method: 'post',
    path: '/api/uploads/',
    operationId: 'upload',
    summary: 'Upload a file',
    tags: ['uploads'],
    auth: 'required',
    rateLimit: 'upload',
    multipart: {
      type: 'object',
      properties: {
        file: { type: 'string', format: 'binary' },
        name: { type: 'string' },
        count: { type: 'integer' },
      },
      required: ['file'],
    },
    responses: { 201: { description: 'Stored.' } },
    handler: async (ctx) =>
      ctx.body === undefined
        ? {
            status: 201,
            body: { streamed: await drain(ctx.req), contentType: ctx.req.headers['content-type'] },
          }
        : { status: 201, body: { parsed: ctx.body } },
  },
  {
    method: 'get',
    path: '/api/me/',
    operationId: 'me',
    summary: 'Current user',
    tags: ['account'],
    auth: 'required',
    responses: { 200: { description: 'You.' } },
    handler: (ctx) => Promise.resolve({ status: 200, body: { username: ctx.principal?.username } }),
  },
  {
    method: 'post',
    path: '/api/login/',
    operationId: 'login',
    summary: 'Log in',
    tags: ['account'],
    auth: 'public',
    rateLimit: 'login',
    responses: { 200: { description: 'Token.' } },
    handler: () => Promise.resolve({ status: 200, body: { token: 'x' } }),
  },
  {
    method: 'get',
    path: '/api/boom/',
    operationId: 'boom',
    summary: 'Fails',
    tags: ['test'],
    auth: 'public',
    responses: { 200: { description: 'Never.' } },
    handler: () => Promise.reject(new Error('secret internal detail')),
  },
  {
    method: 'get',
    path: '/api/files/{name}/',
    operationId: 'download',
    summary: 'Download',
    tags: ['test'],
    auth: 'public',
    responses: { 200: { description: 'Bytes.', schema: { type: 'string', format: 'binary' } } },
    handler: (ctx) => {
      if (ctx.params.name === 'broken') {
        const failing = new Readable({
          read() {
            this.destroy(new Error('disk gone'));
          },
        });
        return Promise.resolve({ status: 200, raw: failing, headers: { 'Content-Type': 'application/zip' } });
      }
      return Promise.resolve({
        status: 200,
        raw: Readable.from([Buffer.from('hello '), Buffer.from(ctx.params.name ?? '')]),
        headers: { 'Content-Type': 'text/plain' },
      });
    },
  },
];

/** A route another app serves (for 405 across apps). */
export const elsewhereRoutes: RouteSpec[] = [
  {
    method: 'put',
    path: '/api/me/',
    operationId: 'replaceMe',
    summary: 'Replace',
    tags: ['account'],
    auth: 'required',
    responses: { 200: { description: 'Ok.' } },
    handler: () => Promise.resolve({ status: 200, body: {} }),
  },
];
