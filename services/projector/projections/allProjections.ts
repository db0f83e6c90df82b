import type { Projection } from '#shared/projections/projection';
import { accountsProjection } from './accountsProjection';
import { eventTypeCountsProjection } from './eventTypeCountsProjection';
import { auditLogProjection } from './auditLogProjection';
import { ledgerProjection } from './ledgerProjection';
import { categoriesProjection } from './categoriesProjection';
import { speciesProjection } from './speciesProjection';
import { atlasesProjection } from './atlasesProjection';
import { brainsProjection } from './brainsProjection';
import { uploadsProjection } from './uploadsProjection';
import type { SearchWriter } from '#shared/search/searchIndex';
import { createSearchProjection, searchProjection } from './searchProjection';

/** Every PostgreSQL read model, in the order they are applied within a batch. */
export const allProjections: readonly Projection[] = [
  accountsProjection,
  eventTypeCountsProjection,
  categoriesProjection,
  speciesProjection,
  atlasesProjection,
  // Empty until brains exist; species read their compact `brains` arrays from it.
  brainsProjection,
  uploadsProjection,
  searchProjection,
  // Every event: the event log and history look-ups.
  auditLogProjection,
  // Every event, chained.
  ledgerProjection,
];

/** allProjections, the search projection also feeding `mirror` (SEARCH_BACKEND=elasticsearch). */
export function projectionsWithSearchMirror(mirror: SearchWriter | undefined): readonly Projection[] {
  if (!mirror) return allProjections;
  const mirrored = createSearchProjection({ mirror });
  return allProjections.map((p) => (p === searchProjection ? mirrored : p));
}
