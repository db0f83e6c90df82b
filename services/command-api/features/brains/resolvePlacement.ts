import type { EventStore } from '#shared/eventStore/eventStore';
import { loadAggregate } from '#shared/commandHandling/handleCommand';
import { atlasDecider, atlasStreamName } from '#shared/domain/atlases/events';
import { categoryDecider, categoryStreamName } from '#shared/domain/categories/events';
import { speciesDecider, speciesStreamName } from '#shared/domain/species/events';
import type { AtlasPlacement, Resolved } from '#shared/domain/brains/decide';

const MAX_ID = 2_147_483_647;
const validId = (id: number): boolean => Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID;

/** Where an atlas places a brain (its species and that species' category), from their streams. */
export async function resolveAtlas(
  store: EventStore,
  atlasId: number | undefined,
): Promise<Resolved<AtlasPlacement>> {
  if (atlasId === undefined) return undefined;
  if (!validId(atlasId)) return { missing: String(atlasId) };
  const atlas = (await loadAggregate(store, atlasStreamName(atlasId), atlasDecider)).state;
  if (atlas.status !== 'created') return { missing: String(atlasId) };
  const species = (await loadAggregate(store, speciesStreamName(atlas.speciesId), speciesDecider)).state;
  if (species.status !== 'created') return { missing: String(atlasId) };
  return { found: { atlasId, speciesId: atlas.speciesId, categoryId: species.categoryId } };
}

/** A category the caller named by id: found when its stream says it exists. */
export async function resolveCategory(
  store: EventStore,
  categoryId: number | undefined,
): Promise<Resolved<number>> {
  if (categoryId === undefined) return undefined;
  if (!validId(categoryId)) return { missing: String(categoryId) };
  const { state } = await loadAggregate(store, categoryStreamName(categoryId), categoryDecider);
  return state.status === 'created' ? { found: categoryId } : { missing: String(categoryId) };
}
