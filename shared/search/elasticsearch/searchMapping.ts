import type { estypes } from '@elastic/elasticsearch';

/**
 * The fields of the visibility rule (searchRequest.ts visibilityClauses): added to an index created
 * before them by install (putMapping may add fields), whose documents without `visibility` were all
 * written public.
 */
export const VISIBILITY_PROPERTIES: Record<string, estypes.MappingProperty> = {
  visibility: { type: 'keyword' },
  embargoUntil: { type: 'date' },
  readers: { type: 'integer' },
};

/**
 * Explicit mapping (dynamic: strict, so a typo in a field name fails loudly). `position` keeps the
 * event position of the last write (text, as 64-bit integers do not survive JSON in Painless
 * reliably) and is stored only, never indexed. Tombstones carry brainId, removed and position.
 */
export const SEARCH_MAPPINGS: estypes.MappingTypeMapping = {
  dynamic: 'strict',
  properties: {
    brainId: { type: 'integer' },
    removed: { type: 'boolean' },
    position: { type: 'object', enabled: false },
    readableId: { type: 'keyword', normalizer: 'lowercase', fields: { text: { type: 'text' } } },
    name: { type: 'text', fields: { exact: { type: 'keyword', normalizer: 'lowercase' } } },
    description: { type: 'text' },
    speciesId: { type: 'integer' },
    speciesName: { type: 'text' },
    scientificName: { type: 'text' },
    atlasId: { type: 'integer' },
    atlasName: { type: 'text' },
    categoryId: { type: 'integer' },
    categoryName: { type: 'text' },
    verified: { type: 'boolean' },
    uploaderId: { type: 'integer' },
    dateUploaded: { type: 'date' },
    ...VISIBILITY_PROPERTIES,
  },
};

/** One shard: a catalogue fits, and relevance scores do not vary with the shard a brain lands on. */
export function searchSettings(options: {
  replicas: number;
  building: boolean;
}): estypes.IndicesIndexSettings {
  return {
    number_of_shards: 1,
    number_of_replicas: options.building ? 0 : options.replicas,
    refresh_interval: options.building ? '-1' : '1s',
    analysis: { normalizer: { lowercase: { type: 'custom', filter: ['lowercase'] } } },
  };
}
