/**
 * Categories, species and atlases as the detail routes showed them at a point of the global order
 * (decisions.md "Audit": "as of" reads and history `changes`), computed by replay: the resource's
 * own stream folded with its domain's evolve, the resources it shows (an atlas's species and its
 * category, a species' category) replayed to the same point, and its counts and compact member
 * lists from the members' streams up to the point, counted and ordered as the read models do
 * (services/projector/projections/{categories,species,atlases}Projection.ts, speciesSql.ts).
 */
import {
  type CategoryCreated,
  type CategoryEvent,
  type CategoryState,
  categoryDecider,
  categoryStreamName,
} from '#shared/domain/categories/events';
import {
  type SpeciesCreated,
  type SpeciesEvent,
  type SpeciesState,
  speciesDecider,
  speciesStreamName,
} from '#shared/domain/species/events';
import {
  type AtlasCreated,
  type AtlasEvent,
  type AtlasState,
  atlasDecider,
  atlasStreamName,
} from '#shared/domain/atlases/events';
import {
  type ActiveBrain,
  type BrainEvent,
  type BrainState,
  brainDecider,
  brainStreamName,
} from '#shared/domain/brains/events';
import { type GlobalPosition, type RecordedEvent, comparePositions } from '#shared/eventStore/eventStore';
import { type CategoryJson, categoryJson } from '#shared/views/categoryViews';
import { COMPACT_LIMIT, type SpeciesJson, speciesJson } from '#shared/views/speciesViews';
import { type AtlasRow, atlasJson } from '#shared/views/atlasViews';
import type { CatalogueReplaySource, ReplayPoint } from './catalogueReplaySource';

/** A representation as of a point, and the position of the newest event it was computed from. */
export interface Replayed<Json> {
  readonly json: Json;
  readonly position: GlobalPosition;
}

interface Decider<S, E> {
  readonly initialState: () => S;
  readonly evolve: (state: S, event: E) => S;
}

/** One replay at one point: reads streams up to it and remembers the newest event it folded. */
class PointReplay {
  private newest: GlobalPosition | undefined;

  constructor(
    private readonly source: CatalogueReplaySource,
    private readonly point: ReplayPoint,
  ) {}

  get position(): GlobalPosition | undefined {
    return this.newest;
  }

  /** Each stream folded with the decider's evolve, with the payload of its `created` event. */
  async fold<S, E extends { readonly type: string; readonly data: unknown }, C extends E>(
    streamNames: readonly string[],
    decider: Decider<S, E>,
    createdType: C['type'],
  ): Promise<Array<{ readonly state: S; readonly created: C['data'] | undefined }>> {
    const streams = await this.source.readStreams(streamNames, this.point.position);
    return streams.map((events) => {
      let state = decider.initialState();
      let created: C['data'] | undefined;
      for (const event of events) {
        this.saw(event);
        state = decider.evolve(state, event as unknown as E);
        if (event.type === createdType) created = event.data;
      }
      return { state, created };
    });
  }

  /** The payload of a stream's create event, when it had happened by the point. */
  async created<
    S extends { readonly status: string },
    E extends { readonly type: string; readonly data: unknown },
    C extends E,
  >(streamName: string, decider: Decider<S, E>, createdType: C['type']): Promise<C['data'] | undefined> {
    const [stream] = await this.fold<S, E, C>([streamName], decider, createdType);
    return stream && stream.state.status === 'created' ? stream.created : undefined;
  }

  /** Ids of the resources of `type` that ever named any of `refs` by the point. */
  async candidates(refs: readonly string[], type: 'brain' | 'species' | 'atlas'): Promise<number[]> {
    const ids = await this.source.resourcesNaming(refs, type, this.point.seq);
    return ids.map(Number).filter(Number.isSafeInteger);
  }

  /** The brains that, at the point, exist and are placed where `placed` says, by id. */
  async brainsWhere(ref: string, placed: (brain: ActiveBrain) => boolean): Promise<ActiveBrain[]> {
    const ids = await this.candidates([ref], 'brain');
    const folded = await this.fold<BrainState, BrainEvent, BrainEvent>(
      ids.map(brainStreamName),
      brainDecider,
      'BrainCreated',
    );
    return folded
      .map((f) => f.state)
      .filter((s): s is ActiveBrain => s.status === 'active' && placed(s))
      .sort((a, b) => a.brainId - b.brainId);
  }

  /** The atlases of these species that exist at the point. */
  async atlasesOf(speciesIds: readonly number[]): Promise<Array<AtlasCreated['data']>> {
    const ids = await this.candidates(
      speciesIds.map((id) => `species:${id}`),
      'atlas',
    );
    const wanted = new Set(speciesIds);
    const folded = await this.fold<AtlasState, AtlasEvent, AtlasCreated>(
      ids.map(atlasStreamName),
      atlasDecider,
      'AtlasCreated',
    );
    return folded.flatMap((f) =>
      f.state.status === 'created' && f.created && wanted.has(f.state.speciesId) ? [f.created] : [],
    );
  }

  private saw(event: RecordedEvent): void {
    if (!this.newest || comparePositions(event.position, this.newest) > 0) this.newest = event.position;
  }

  done<Json>(json: Json): Replayed<Json> {
    if (!this.newest) throw new Error('a replayed representation folded no event');
    return { json, position: this.newest };
  }

  categoryCreated = (id: number) =>
    this.created<CategoryState, CategoryEvent, CategoryCreated>(
      categoryStreamName(id),
      categoryDecider,
      'CategoryCreated',
    );

  speciesCreated = (id: number) =>
    this.created<SpeciesState, SpeciesEvent, SpeciesCreated>(
      speciesStreamName(id),
      speciesDecider,
      'SpeciesCreated',
    );

  atlasCreated = (id: number) =>
    this.created<AtlasState, AtlasEvent, AtlasCreated>(atlasStreamName(id), atlasDecider, 'AtlasCreated');

  /** A resource the replayed one shows must exist by the point (the deciders require it). */
  static required<T>(value: T | undefined, what: string): T {
    if (value === undefined) throw new Error(`replay: ${what} does not exist at the point`);
    return value;
  }
}

/** The category as GET /api/categories/{name}/ answered right after the point; undefined if it did not exist. */
export async function categoryAt(
  source: CatalogueReplaySource,
  categoryId: number,
  point: ReplayPoint,
  baseUrl: string,
): Promise<Replayed<CategoryJson> | undefined> {
  const replay = new PointReplay(source, point);
  const category = await replay.categoryCreated(categoryId);
  if (!category) return undefined;
  const [brains, atlases] = await Promise.all([
    replay.brainsWhere(`category:${categoryId}`, (b) => b.categoryId === categoryId),
    atlasesInCategory(replay, categoryId),
  ]);
  return replay.done(
    categoryJson(
      {
        id: category.categoryId,
        name: category.name,
        description: category.description,
        image_key: category.imageKey,
        image_url: category.imageUrl,
        brains_count: brains.length,
        atlases_count: atlases.length,
      },
      baseUrl,
    ),
  );
}

/** An atlas counts for the category of its species (categoriesProjection). */
async function atlasesInCategory(
  replay: PointReplay,
  categoryId: number,
): Promise<Array<AtlasCreated['data']>> {
  const speciesIds = await replay.candidates([`category:${categoryId}`], 'species');
  const species = await replay.fold<SpeciesState, SpeciesEvent, SpeciesCreated>(
    speciesIds.map(speciesStreamName),
    speciesDecider,
    'SpeciesCreated',
  );
  const inCategory = species.flatMap((s) =>
    s.state.status === 'created' && s.state.categoryId === categoryId ? [s.state.speciesId] : [],
  );
  return inCategory.length === 0 ? [] : replay.atlasesOf(inCategory);
}

/** The species as GET /api/species/{scientific_name}/ answered right after the point; undefined if it did not exist. */
export async function speciesAt(
  source: CatalogueReplaySource,
  speciesId: number,
  point: ReplayPoint,
): Promise<Replayed<SpeciesJson> | undefined> {
  const replay = new PointReplay(source, point);
  const species = await replay.speciesCreated(speciesId);
  if (!species) return undefined;
  const [category, brains, atlases] = await Promise.all([
    replay.categoryCreated(species.categoryId),
    replay.brainsWhere(`species:${speciesId}`, (b) => b.speciesId === speciesId),
    replay.atlasesOf([speciesId]),
  ]);
  const { name: categoryName } = PointReplay.required(category, `category ${species.categoryId}`);
  const atlasOrder = await source.orderByName(atlases.map((a) => ({ id: a.atlasId, name: a.name })));
  const atlasById = new Map(atlases.map((a) => [a.atlasId, a]));
  return replay.done(
    speciesJson({
      id: species.speciesId,
      name: species.name,
      scientific_name: species.scientificName,
      description: species.description,
      category_id: species.categoryId,
      category_name: categoryName,
      brains: brains
        .slice(0, COMPACT_LIMIT)
        .map((b) => ({ id: b.brainId, name: b.name, readable_id: b.readableId })),
      atlases: atlasOrder.slice(0, COMPACT_LIMIT).flatMap((id) => {
        const a = atlasById.get(id);
        return a ? [{ id: a.atlasId, name: a.name, slug: a.slug }] : [];
      }),
      brains_count: brains.length,
      atlases_count: atlases.length,
    }),
  );
}

/** The atlas as GET /api/atlases/{slug}/ answered right after the point; undefined if it did not exist. */
export async function atlasAt(
  source: CatalogueReplaySource,
  atlasId: number,
  point: ReplayPoint,
): Promise<Replayed<AtlasRow> | undefined> {
  const replay = new PointReplay(source, point);
  const atlas = await replay.atlasCreated(atlasId);
  if (!atlas) return undefined;
  const [species, brains] = await Promise.all([
    replay.speciesCreated(atlas.speciesId),
    replay.brainsWhere(`atlas:${atlasId}`, (b) => b.atlasId === atlasId),
  ]);
  const { name, scientificName, categoryId } = PointReplay.required(species, `species ${atlas.speciesId}`);
  const category = PointReplay.required(await replay.categoryCreated(categoryId), `category ${categoryId}`);
  return replay.done(
    atlasJson({
      id: atlas.atlasId,
      name: atlas.name,
      slug: atlas.slug,
      description: atlas.description,
      species: {
        id: atlas.speciesId,
        name,
        scientific_name: scientificName,
        category: { id: categoryId, name: category.name },
      },
      is_official: atlas.isOfficial,
      verified: atlas.verified,
      version: atlas.version,
      color: atlas.color,
      brains_count: brains.length,
      publication_url: atlas.publicationUrl,
    }),
  );
}
