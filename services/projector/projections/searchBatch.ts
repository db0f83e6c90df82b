import type { PoolClient } from 'pg';
import type { GlobalPosition, RecordedEvent } from '#shared/eventStore/eventStore';
import {
  BRAIN_EVENT_TYPES,
  createdVisibility,
  type BrainCreated,
  type BrainEvent,
  type BrainFields,
} from '#shared/domain/brains/events';
import type { Visibility } from '#shared/domain/brains/visibility';
import type { CategoryEvent } from '#shared/domain/categories/events';
import type { SpeciesEvent } from '#shared/domain/species/events';
import type { AtlasEvent } from '#shared/domain/atlases/events';
import type { BrainSearchDocument, SearchRemoval, SearchUpsert } from '#shared/search/searchIndex';
import { writeDocuments } from '#shared/search/postgres/searchWrites';

export type SearchEvent = CategoryEvent | SpeciesEvent | AtlasEvent | BrainEvent;

/** The search projection's physical tables (ProjectionContext.table of each logical name). */
export interface SearchProjectionTables {
  readonly documents: string;
  readonly species: string;
  readonly atlases: string;
  readonly categories: string;
}

interface Named {
  readonly name: string;
  readonly scientificName?: string;
}

interface DocumentRow {
  brain_id: number;
  readable_id: string;
  name: string;
  description: string;
  species_id: number | null;
  species_name: string | null;
  scientific_name: string | null;
  atlas_id: number | null;
  atlas_name: string | null;
  category_id: number;
  category_name: string | null;
  verified: boolean;
  uploader_id: number;
  date_uploaded: Date;
  visibility: Visibility;
  embargo_until: Date | null;
  readers: number[];
}

const toDocument = (row: DocumentRow): BrainSearchDocument => ({
  brainId: row.brain_id,
  readableId: row.readable_id,
  name: row.name,
  description: row.description,
  speciesId: row.species_id,
  speciesName: row.species_name,
  scientificName: row.scientific_name,
  atlasId: row.atlas_id,
  atlasName: row.atlas_name,
  categoryId: row.category_id,
  categoryName: row.category_name ?? '',
  verified: row.verified,
  uploaderId: row.uploader_id,
  dateUploaded: row.date_uploaded,
  visibility: row.visibility,
  embargoUntil: row.embargo_until,
  readers: row.readers,
});

/** An ISO time of an event as the document keeps it. */
const dateOrNull = (iso: string | null | undefined): Date | null => (iso ? new Date(iso) : null);

/** Fields of a BrainUpdated the document keeps (an own-property map). */
const DOCUMENT_FIELDS: Readonly<Partial<Record<keyof BrainFields, keyof BrainSearchDocument>>> = {
  name: 'name',
  description: 'description',
  atlasId: 'atlasId',
  speciesId: 'speciesId',
  categoryId: 'categoryId',
  verified: 'verified',
};

function ids(values: Iterable<number | null | undefined>): number[] {
  return [...new Set([...values].filter((v): v is number => typeof v === 'number'))];
}

/**
 * One batch of the search projection, applied in memory and written with a few statements (a
 * statement per event would fire the count triggers and the GIN updates per event: a rebuild would
 * crawl). It loads the documents the batch changes and the names it needs, applies the events in
 * order, then upserts the final documents and the removed ones' tombstones. Names are the projection's
 * own lookups, as they were at each event.
 */
export class SearchBatch {
  private readonly documents = new Map<number, { document: BrainSearchDocument; position: GlobalPosition }>();
  private readonly removed = new Map<number, GlobalPosition>();
  private readonly species = new Map<number, Named>();
  private readonly atlases = new Map<number, Named>();
  private readonly categories = new Map<number, Named>();

  private constructor(
    private readonly client: PoolClient,
    private readonly t: SearchProjectionTables,
  ) {}

  static async load(
    client: PoolClient,
    t: SearchProjectionTables,
    events: readonly RecordedEvent[],
  ): Promise<SearchBatch> {
    const batch = new SearchBatch(client, t);
    const brainEvents = events
      .map((e) => ({ type: e.type, data: e.data }) as SearchEvent)
      .filter((e): e is BrainEvent => (BRAIN_EVENT_TYPES as ReadonlySet<string>).has(e.type));
    const fields = brainEvents.map((e): Partial<BrainFields> =>
      e.type === 'BrainCreated' ? e.data : e.type === 'BrainUpdated' ? e.data.changes : {},
    );
    const created = new Set(brainEvents.flatMap((e) => (e.type === 'BrainCreated' ? [e.data.brainId] : [])));
    const existing = ids(brainEvents.map((e) => (e.type === 'BrainCreated' ? null : e.data.brainId))).filter(
      (id) => !created.has(id),
    );
    await batch.loadNames(
      ids(fields.map((f) => f.speciesId)),
      ids(fields.map((f) => f.atlasId)),
      ids(fields.map((f) => f.categoryId)),
    );
    if (existing.length > 0) {
      const { rows } = await client.query<
        DocumentRow & { position_commit: string; position_prepare: string }
      >(`SELECT * FROM ${t.documents} WHERE brain_id = ANY($1::integer[]) AND NOT removed`, [existing]);
      for (const row of rows)
        batch.documents.set(row.brain_id, {
          document: toDocument(row),
          position: { commit: BigInt(row.position_commit), prepare: BigInt(row.position_prepare) },
        });
    }
    return batch;
  }

  private async loadNames(speciesIds: number[], atlasIds: number[], categoryIds: number[]): Promise<void> {
    const load = async (table: string, wanted: number[], into: Map<number, Named>, extra = '') => {
      if (wanted.length === 0) return;
      const { rows } = await this.client.query<{ id: number; name: string; scientific_name?: string }>(
        `SELECT id, name${extra} FROM ${table} WHERE id = ANY($1::integer[])`,
        [wanted],
      );
      for (const row of rows) into.set(row.id, { name: row.name, scientificName: row.scientific_name });
    };
    await load(this.t.species, speciesIds, this.species, ', scientific_name');
    await load(this.t.atlases, atlasIds, this.atlases);
    await load(this.t.categories, categoryIds, this.categories);
  }

  async apply(recorded: RecordedEvent): Promise<void> {
    const event = { type: recorded.type, data: recorded.data } as SearchEvent;
    const { position } = recorded;
    switch (event.type) {
      case 'CategoryCreated':
        this.categories.set(event.data.categoryId, { name: event.data.name });
        await this.client.query(`INSERT INTO ${this.t.categories} (id, name) VALUES ($1, $2)`, [
          event.data.categoryId,
          event.data.name,
        ]);
        return;
      case 'SpeciesCreated': {
        const d = event.data;
        this.species.set(d.speciesId, { name: d.name, scientificName: d.scientificName });
        await this.client.query(
          `INSERT INTO ${this.t.species} (id, name, scientific_name) VALUES ($1, $2, $3)`,
          [d.speciesId, d.name, d.scientificName],
        );
        return;
      }
      case 'AtlasCreated':
        this.atlases.set(event.data.atlasId, { name: event.data.name });
        await this.client.query(`INSERT INTO ${this.t.atlases} (id, name) VALUES ($1, $2)`, [
          event.data.atlasId,
          event.data.name,
        ]);
        return;
      case 'BrainCreated':
        this.documents.set(event.data.brainId, { document: this.created(event.data), position });
        return;
      case 'BrainUpdated': {
        const current = this.documents.get(event.data.brainId);
        if (current)
          this.documents.set(event.data.brainId, {
            document: this.updated(current.document, event.data.changes),
            position,
          });
        return;
      }
      case 'BrainDeleted':
        this.documents.delete(event.data.brainId);
        this.removed.set(event.data.brainId, position);
        return;
      case 'BrainCollaboratorAdded':
      case 'BrainCollaboratorRoleChanged':
        // A role changes nothing the search reads; the collaborator is a reader either way.
        this.change(event.data.brainId, position, (d) =>
          d.readers.includes(event.data.userId) ? d : { ...d, readers: [...d.readers, event.data.userId] },
        );
        return;
      case 'BrainCollaboratorRemoved':
        this.change(event.data.brainId, position, (d) => ({
          ...d,
          readers: d.readers.filter((id) => id !== event.data.userId || id === d.uploaderId),
        }));
        return;
      case 'EmbargoLifted':
        // As the brain's state: public from now on, its embargo_until kept.
        this.change(event.data.brainId, position, (d) => ({ ...d, visibility: 'public' }));
        return;
    }
  }

  /** A live document of the batch rewritten by `next` at `position` (an unknown brain stays unknown). */
  private change(
    brainId: number,
    position: GlobalPosition,
    next: (document: BrainSearchDocument) => BrainSearchDocument,
  ): void {
    const current = this.documents.get(brainId);
    if (current) this.documents.set(brainId, { document: next(current.document), position });
  }

  /**
   * The names of the document's species, atlas and category: kept from `previous` where the id did
   * not change (its lookup may not be loaded), else as the lookups say now.
   */
  private withNames(
    d: Omit<BrainSearchDocument, 'speciesName' | 'scientificName' | 'atlasName' | 'categoryName'>,
    previous?: BrainSearchDocument,
  ): BrainSearchDocument {
    const species = d.speciesId === null ? undefined : this.species.get(d.speciesId);
    const sameSpecies = previous !== undefined && previous.speciesId === d.speciesId;
    const sameAtlas = previous !== undefined && previous.atlasId === d.atlasId;
    const sameCategory = previous !== undefined && previous.categoryId === d.categoryId;
    return {
      ...d,
      speciesName: sameSpecies ? previous.speciesName : (species?.name ?? null),
      scientificName: sameSpecies ? previous.scientificName : (species?.scientificName ?? null),
      atlasName: sameAtlas
        ? previous.atlasName
        : d.atlasId === null
          ? null
          : (this.atlases.get(d.atlasId)?.name ?? null),
      // A brain's category always exists before it; the empty name only guards a corrupt stream.
      categoryName: sameCategory ? previous.categoryName : (this.categories.get(d.categoryId)?.name ?? ''),
    };
  }

  private created(d: BrainCreated['data']): BrainSearchDocument {
    const { visibility, embargoUntil } = createdVisibility(d);
    return this.withNames({
      brainId: d.brainId,
      readableId: d.readableId,
      name: d.name,
      description: d.description,
      speciesId: d.speciesId,
      atlasId: d.atlasId,
      categoryId: d.categoryId,
      verified: d.verified,
      uploaderId: d.uploaderId,
      dateUploaded: new Date(d.createdAt),
      visibility,
      embargoUntil: dateOrNull(embargoUntil),
      readers: [d.uploaderId],
    });
  }

  private updated(document: BrainSearchDocument, changes: Partial<BrainFields>): BrainSearchDocument {
    const next: Record<string, unknown> = { ...document };
    for (const [field, value] of Object.entries(changes)) {
      const key = Object.hasOwn(DOCUMENT_FIELDS, field)
        ? DOCUMENT_FIELDS[field as keyof BrainFields]
        : undefined;
      if (key) next[key] = value;
    }
    if (changes.visibility !== undefined) next.visibility = changes.visibility;
    if (changes.embargoUntil !== undefined) next.embargoUntil = dateOrNull(changes.embargoUntil);
    return this.withNames(next as unknown as BrainSearchDocument, document);
  }

  /** Writes the batch's outcome; returns what a mirror index must be told. */
  async write(): Promise<{ upserts: SearchUpsert[]; removals: SearchRemoval[] }> {
    const upserts = [...this.documents.values()];
    const removals = [...this.removed].map(([brainId, position]) => ({ brainId, position }));
    await writeDocuments(
      this.client,
      this.t.documents,
      upserts.map(({ document, position }) => ({ brainId: document.brainId, document, position })),
    );
    // A removal is a tombstone at its position rather than a deleted row: whoever follows the
    // documents by position (the in-memory index of each query API) sees it go.
    await writeDocuments(
      this.client,
      this.t.documents,
      removals.map(({ brainId, position }) => ({ brainId, document: null, position })),
    );
    return { upserts, removals };
  }
}
