/** Tests bind what the service binds: one helper picks a free loopback port for both. */
export { freeLoopbackPort as freePort } from '#shared/infra/postgres/freeLoopbackPort';
