import { scientificNameKey } from '../../../../shared/domain/naming/naming';
import type { QueryDeps } from '../../queryDeps';
import { type BrainListFilter, countBrains, speciesIdsByKey } from './brainSql';

/** The ids of the species with this scientific name (normalised as naming.scientificNameKey does). */
export function cachedSpeciesIds(deps: QueryDeps, scientificName: string): Promise<number[]> {
  const key = scientificNameKey(scientificName);
  return deps.speciesIds.get(key, () => speciesIdsByKey(deps.readModels, key));
}

/** X-Total-Count of a filter, kept until a brain (or an atlas or category it names) changes. */
export const cachedCount = (deps: QueryDeps, filter: BrainListFilter): Promise<number> =>
  deps.brainCounts.get(`${filter.conditions.whereSql}\0${JSON.stringify(filter.conditions.params())}`, () =>
    countBrains(deps.readModels, filter),
  );
