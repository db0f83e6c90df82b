import type { SqlNames } from '#shared/eventStore/postgres/sqlNames';

/** One ordered schema change. Versions are applied once, in ascending order, never edited afterwards. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  sql(names: SqlNames): string;
}
