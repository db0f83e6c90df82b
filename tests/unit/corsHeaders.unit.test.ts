import { ServerResponse, IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import cors from 'cors';
import {
  CORS_ALLOWED_HEADERS,
  CORS_ALLOWED_METHODS,
  CORS_EXPOSED_HEADERS,
  applyCors,
} from '#shared/http/corsMiddleware';

/**
 * applyCors builds its headers once; the `cors` package it replaced builds them per request. Both
 * must answer every request exactly alike: same headers in the same order, same preflight status.
 */
const reference = cors({
  origin: '*',
  methods: [...CORS_ALLOWED_METHODS],
  allowedHeaders: [...CORS_ALLOWED_HEADERS],
  exposedHeaders: [...CORS_EXPOSED_HEADERS],
  maxAge: 600,
  optionsSuccessStatus: 204,
  preflightContinue: false,
});

function exchange(method: string, headers: Record<string, string>) {
  const req = new IncomingMessage(new Socket());
  req.method = method;
  req.headers = headers;
  const res = new ServerResponse(req);
  let ended = false;
  res.end = (() => {
    ended = true;
    return res;
  }) as typeof res.end;
  return { req, res, ended: () => ended };
}

const cases: [string, Record<string, string>][] = [
  ['GET', {}],
  ['GET', { origin: 'https://example.org' }],
  ['POST', { origin: 'https://example.org', 'content-type': 'application/json' }],
  ['DELETE', {}],
  ['OPTIONS', {}],
  [
    'OPTIONS',
    {
      origin: 'https://example.org',
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'authorization, content-type',
    },
  ],
];

test.each(cases)('%s %j: the same answer as the cors package', (method, headers) => {
  const ours = exchange(method, headers);
  const answered = applyCors(ours.req, ours.res);
  const theirs = exchange(method, headers);
  let passedOn = false;
  reference(theirs.req, theirs.res, () => {
    passedOn = true;
  });
  expect(answered).toBe(!passedOn);
  expect(answered).toBe(method === 'OPTIONS');
  expect(ours.ended()).toBe(theirs.ended());
  expect(ours.res.statusCode).toBe(theirs.res.statusCode);
  expect(Object.entries(ours.res.getHeaders())).toEqual(Object.entries(theirs.res.getHeaders()));
  expect(ours.res.getHeader('Access-Control-Allow-Origin')).toBe('*');
});
