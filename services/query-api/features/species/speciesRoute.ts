import { scientificNameKey } from '#shared/domain/naming/naming';
import { type SpeciesRow, speciesJson, speciesSchema } from '#shared/views/speciesViews';
import { speciesAt } from '#shared/audit/replay/catalogueReplay';
import type { QueryDeps } from '#services/query-api/queryDeps';
import { catalogueItemRoute } from '#services/query-api/catalogueItemRoute';
import { SCIENTIFIC_NAME_KEY_SQL, speciesQuery } from './speciesSql';

export const speciesRoute = (deps: QueryDeps) =>
  catalogueItemRoute<SpeciesRow>(deps, {
    path: '/api/species/{scientific_name}/',
    operationId: 'getSpecies',
    summary: 'A species by scientific name',
    description: 'Case-insensitive; the words may be separated by %20, "+", "_" or "-" (e.g. mus-musculus).',
    tag: 'species',
    param: 'scientific_name',
    what: 'species',
    schema: speciesSchema,
    select(conditions, viewer, scientificName) {
      const { select } = speciesQuery(conditions, viewer);
      conditions.where(`${SCIENTIFIC_NAME_KEY_SQL} = ${conditions.param(scientificNameKey(scientificName))}`);
      return `${select} ${conditions.whereSql}`;
    },
    json: (row) => speciesJson(row),
    at: (source, id, point) => speciesAt(source, id, point),
  });
