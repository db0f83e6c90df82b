import { randomBytes } from 'node:crypto';
import { randomPassword } from '#shared/infra/postgres/credentialsFile';
import { serverUrl } from './testPostgres';

/**
 * The split the embedded cluster uses, named afresh for one test file on the run's PostgreSQL: an
 * owner role that migrates, the service's (app) role, their passwords and a database name.
 * `urlFor(role)` connects to that database as one of the roles.
 */
export function splitRoles(databasePrefix: string) {
  const suffix = randomBytes(4).toString('hex');
  const roles = { owner: `t_owner_${suffix}`, app: `t_app_${suffix}` };
  const passwords = { [roles.owner]: randomPassword(), [roles.app]: randomPassword() };
  const database = `${databasePrefix}_${suffix}`;
  const urlFor = (role: string): string => {
    const url = new URL(serverUrl());
    url.username = role;
    url.password = passwords[role]!;
    url.pathname = `/${database}`;
    return url.toString();
  };
  return { suffix, roles, passwords, database, urlFor };
}
