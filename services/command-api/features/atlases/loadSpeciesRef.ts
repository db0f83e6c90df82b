import type { EventStore } from '#shared/eventStore/eventStore';
import { loadAggregate } from '#shared/commandHandling/handleCommand';
import { categoryDecider, categoryStreamName } from '#shared/domain/categories/events';
import type { SpeciesEvent } from '#shared/domain/species/events';
import { speciesStreamName } from '#shared/domain/species/events';
import type { AtlasSpeciesRef } from '#shared/views/atlasViews';

const MAX_ID = 2_147_483_647;

/**
 * A species as an atlas shows it ({id, name, scientific_name, category {id, name}}), from its
 * stream and its category's; undefined when no species has that id.
 */
export async function loadSpeciesRef(
  store: EventStore,
  speciesId: number,
): Promise<AtlasSpeciesRef | undefined> {
  if (!Number.isSafeInteger(speciesId) || speciesId < 1 || speciesId > MAX_ID) return undefined;
  const events = (await store.readStream(speciesStreamName(speciesId), {
    maxCount: 1,
  })) as unknown as readonly SpeciesEvent[];
  const created = events.find((e) => e.type === 'SpeciesCreated');
  if (!created) return undefined;
  const { state } = await loadAggregate(store, categoryStreamName(created.data.categoryId), categoryDecider);
  return {
    id: speciesId,
    name: created.data.name,
    scientific_name: created.data.scientificName,
    category: { id: created.data.categoryId, name: state.status === 'created' ? state.name : '' },
  };
}
