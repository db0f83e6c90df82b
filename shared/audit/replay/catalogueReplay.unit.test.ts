import type { RecordedEvent } from '#shared/eventStore/eventStore';
import { comparePositions, formatPosition } from '#shared/eventStore/eventStore';
import { isInternalEvent, referencesOfEvent, resourceOfEvent } from '#shared/audit/auditedEvent';
import { atlasAt, categoryAt, speciesAt } from './catalogueReplay';
import {
  BEFORE_EVERYTHING,
  type CatalogueReplaySource,
  type ReplayPoint,
  pointBefore,
} from './catalogueReplaySource';

/**
 * An in-memory event log standing in for the event store and the audit log: events in global order
 * (seq = index + 1, position (seq, seq)), references and resources by the audit rules.
 */
class Log implements CatalogueReplaySource {
  readonly events: RecordedEvent[] = [];
  readonly streamReads: string[] = [];

  append(streamName: string, type: string, data: Record<string, unknown>): ReplayPoint {
    const seq = this.events.length + 1;
    const position = { commit: BigInt(seq), prepare: BigInt(seq) };
    const streamRevision = BigInt(this.events.filter((e) => e.streamName === streamName).length);
    this.events.push({
      id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
      type,
      data,
      metadata: {
        actor: '1',
        requestId: null,
        correlationId: 'c',
        causationId: null,
        schemaVersion: 1,
        recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
      },
      streamName,
      streamRevision,
      position,
    });
    return { seq, position };
  }

  get head(): ReplayPoint {
    const seq = this.events.length;
    return { seq, position: { commit: BigInt(seq), prepare: BigInt(seq) } };
  }

  readStreams(names: readonly string[], upTo: ReplayPoint['position']): Promise<RecordedEvent[][]> {
    this.streamReads.push(...names);
    return Promise.resolve(
      names.map((name) =>
        this.events.filter((e) => e.streamName === name && comparePositions(e.position, upTo) <= 0),
      ),
    );
  }

  resourcesNaming(refs: readonly string[], type: string, seq: number): Promise<string[]> {
    const ids = new Set<string>();
    this.events.slice(0, Math.max(0, seq)).forEach((e) => {
      const own = resourceOfEvent(e);
      if (
        own?.type === type &&
        !isInternalEvent(e.type) &&
        referencesOfEvent(e).some((r) => refs.includes(r))
      )
        ids.add(own.id);
    });
    return Promise.resolve([...ids]);
  }

  orderByName(items: readonly { id: number; name: string }[]): Promise<number[]> {
    return Promise.resolve(
      [...items]
        .sort((a, b) => {
          const [x, y] = [a.name.toLowerCase(), b.name.toLowerCase()];
          return x < y ? -1 : x > y ? 1 : a.id - b.id;
        })
        .map((i) => i.id),
    );
  }
}

const at = '2026-01-01T00:00:00.000Z';

function category(log: Log, id: number, name: string): ReplayPoint {
  return log.append(`category-${id}`, 'CategoryCreated', {
    categoryId: id,
    name,
    description: `${name} description`,
    imageKey: null,
    imageUrl: 'https://example.org/c.png',
    createdBy: 1,
    createdAt: at,
  });
}

function species(log: Log, id: number, categoryId: number, scientificName: string): ReplayPoint {
  return log.append(`species-${id}`, 'SpeciesCreated', {
    speciesId: id,
    name: scientificName.toLowerCase(),
    scientificName,
    description: '',
    categoryId,
    createdBy: 1,
    createdAt: at,
  });
}

function atlas(log: Log, id: number, speciesId: number, name: string): ReplayPoint {
  // Bookkeeping around a create must not count: an allocated id and a reservation.
  log.append('$ids-atlas', 'IdAllocated', { sequence: 'atlas', id });
  return log.append(`atlas-${id}`, 'AtlasCreated', {
    atlasId: id,
    name,
    slug: name.toLowerCase().replace(/\s+/g, '-'),
    description: 'an atlas',
    speciesId,
    isOfficial: false,
    verified: false,
    version: '',
    color: '',
    publicationUrl: '',
    createdBy: 7,
    createdAt: at,
  });
}

interface Placement {
  atlasId: number | null;
  speciesId: number | null;
  categoryId: number;
}

function brain(log: Log, id: number, name: string, placed: Placement): ReplayPoint {
  return log.append(`brain-${id}`, 'BrainCreated', {
    brainId: id,
    readableId: `brain-${id}`,
    uuid: `uuid-${id}`,
    uploaderId: 3,
    fileUploadId: null,
    createdAt: at,
    name,
    description: '',
    isReference: false,
    extraLink: '',
    website: '',
    color: '',
    verified: false,
    ...placed,
  });
}

const update = (log: Log, id: number, changes: Record<string, unknown>): ReplayPoint =>
  log.append(`brain-${id}`, 'BrainUpdated', { brainId: id, changes, updatedBy: 3, updatedAt: at });

const remove = (log: Log, id: number): ReplayPoint =>
  log.append(`brain-${id}`, 'BrainDeleted', { brainId: id, fileUploadIds: [], deletedBy: 3, deletedAt: at });

const base = 'http://catalogue.test';

/** A mouse species with two atlases; a rat species with one; brains coming and going. */
function world() {
  const log = new Log();
  const points = {
    category: category(log, 1, 'rodents'),
    mouse: species(log, 10, 1, 'Mus musculus'),
    rat: species(log, 11, 1, 'Rattus norvegicus'),
    zeta: atlas(log, 100, 10, 'Zeta atlas'),
    alpha: atlas(log, 101, 10, 'alpha atlas'),
    ratAtlas: atlas(log, 102, 11, 'Rat atlas'),
    b1: brain(log, 1000, 'one', { atlasId: 100, speciesId: 10, categoryId: 1 }),
    b2: brain(log, 1001, 'two', { atlasId: 101, speciesId: 10, categoryId: 1 }),
    b3: brain(log, 1002, 'three', { atlasId: 100, speciesId: 10, categoryId: 1 }),
    renamed: update(log, 1001, { name: 'two renamed' }),
    moved: update(log, 1000, { atlasId: 102, speciesId: 11 }),
    deleted: remove(log, 1002),
  };
  return { log, points };
}

describe('speciesAt', () => {
  test('does not exist before its create; at the create it has no members', async () => {
    const { log, points } = world();
    expect(await speciesAt(log, 10, pointBefore(points.mouse))).toBeUndefined();
    expect(await speciesAt(log, 10, BEFORE_EVERYTHING)).toBeUndefined();
    const created = await speciesAt(log, 10, points.mouse);
    expect(created).toEqual({
      json: {
        id: 10,
        name: 'mus musculus',
        scientific_name: 'Mus musculus',
        description: '',
        category: { id: 1, name: 'rodents' },
        category_name: 'rodents',
        brains: [],
        atlases: [],
        brains_count: 0,
        atlases_count: 0,
      },
      position: points.mouse.position,
    });
  });

  test('counts and compact lists follow brains created, renamed, moved away and deleted', async () => {
    const { log, points } = world();
    const compact = async (point: ReplayPoint) => {
      const s = (await speciesAt(log, 10, point))!;
      return {
        brains: s.json.brains,
        brains_count: s.json.brains_count,
        atlases: s.json.atlases.map((a) => a.slug),
        atlases_count: s.json.atlases_count,
        position: formatPosition(s.position),
      };
    };
    expect(await compact(points.alpha)).toEqual({
      brains: [],
      brains_count: 0,
      atlases: ['alpha-atlas', 'zeta-atlas'],
      atlases_count: 2,
      position: formatPosition(points.alpha.position),
    });
    expect(await compact(points.b3)).toMatchObject({
      brains: [
        { id: 1000, name: 'one', readable_id: 'brain-1000' },
        { id: 1001, name: 'two', readable_id: 'brain-1001' },
        { id: 1002, name: 'three', readable_id: 'brain-1002' },
      ],
      brains_count: 3,
      position: formatPosition(points.b3.position),
    });
    expect((await compact(points.renamed)).brains[1]).toEqual({
      id: 1001,
      name: 'two renamed',
      readable_id: 'brain-1001',
    });
    expect(await compact(points.moved)).toMatchObject({
      brains: [
        { id: 1001, name: 'two renamed', readable_id: 'brain-1001' },
        { id: 1002, name: 'three', readable_id: 'brain-1002' },
      ],
      brains_count: 2,
      position: formatPosition(points.moved.position),
    });
    expect(await compact(points.deleted)).toMatchObject({
      brains: [{ id: 1001, name: 'two renamed', readable_id: 'brain-1001' }],
      brains_count: 1,
      position: formatPosition(points.deleted.position),
    });
  });

  test('the rat species gains the brain moved into it, and only then', async () => {
    const { log, points } = world();
    expect((await speciesAt(log, 11, pointBefore(points.moved)))!.json.brains_count).toBe(0);
    const after = (await speciesAt(log, 11, points.moved))!;
    expect(after.json.brains).toEqual([{ id: 1000, name: 'one', readable_id: 'brain-1000' }]);
    expect(after.json.atlases).toEqual([{ id: 102, name: 'Rat atlas', slug: 'rat-atlas' }]);
  });

  test('at most 100 compact brains and atlases, by id and by name; the counts are exact', async () => {
    const log = new Log();
    category(log, 1, 'c');
    species(log, 10, 1, 'Mus musculus');
    for (let i = 0; i < 103; i++) atlas(log, 200 + i, 10, `Atlas ${String(102 - i).padStart(3, '0')}`);
    for (let i = 0; i < 105; i++)
      brain(log, 5000 - i, `b${i}`, { atlasId: 200, speciesId: 10, categoryId: 1 });
    const s = (await speciesAt(log, 10, log.head))!.json;
    expect(s.brains_count).toBe(105);
    expect(s.atlases_count).toBe(103);
    expect(s.brains).toHaveLength(100);
    expect(s.brains[0]!.id).toBe(5000 - 104);
    expect(s.brains.map((b) => b.id)).toEqual([...s.brains.map((b) => b.id)].sort((a, b) => a - b));
    expect(s.atlases).toHaveLength(100);
    expect(s.atlases[0]!.name).toBe('Atlas 000');
    expect(s.atlases[99]!.name).toBe('Atlas 099');
  });
});

describe('categoryAt', () => {
  test('counts the atlases of its species and the brains filed under it, as of each point', async () => {
    const { log, points } = world();
    expect(await categoryAt(log, 1, pointBefore(points.category), base)).toBeUndefined();
    expect(await categoryAt(log, 1, points.category, base)).toEqual({
      json: {
        id: 1,
        name: 'rodents',
        description: 'rodents description',
        image: null,
        image_url: 'https://example.org/c.png',
        image_source: 'https://example.org/c.png',
        brains_count: 0,
        atlases_count: 0,
      },
      position: points.category.position,
    });
    const counts = async (point: ReplayPoint) => {
      const c = (await categoryAt(log, 1, point, base))!.json;
      return [c.atlases_count, c.brains_count];
    };
    expect(await counts(points.ratAtlas)).toEqual([3, 0]);
    expect(await counts(points.b3)).toEqual([3, 3]);
    // A move between atlases of the same category keeps the brain counted; a delete does not.
    expect(await counts(points.moved)).toEqual([3, 3]);
    expect(await counts(points.deleted)).toEqual([3, 2]);
  });

  test('a brain filed under another category is not counted; moved in, it is', async () => {
    const log = new Log();
    category(log, 1, 'one');
    category(log, 2, 'two');
    brain(log, 1, 'b', { atlasId: null, speciesId: null, categoryId: 2 });
    const before = log.head;
    const moved = update(log, 1, { categoryId: 1 });
    expect((await categoryAt(log, 1, before, base))!.json.brains_count).toBe(0);
    expect((await categoryAt(log, 2, before, base))!.json.brains_count).toBe(1);
    expect((await categoryAt(log, 1, moved, base))!.json.brains_count).toBe(1);
    expect((await categoryAt(log, 2, moved, base))!.json.brains_count).toBe(0);
  });

  test('an uploaded image is served from the media route', async () => {
    const log = new Log();
    log.append('category-3', 'CategoryCreated', {
      categoryId: 3,
      name: 'imaged',
      description: '',
      imageKey: 'categories/x.png',
      imageUrl: null,
      createdBy: 1,
      createdAt: at,
    });
    expect((await categoryAt(log, 3, log.head, base))!.json).toMatchObject({
      image: `${base}/media/categories/x.png/`,
      image_source: `${base}/media/categories/x.png/`,
      image_url: null,
    });
  });
});

describe('atlasAt', () => {
  test('shows its species and category and counts its brains as of each point', async () => {
    const { log, points } = world();
    expect(await atlasAt(log, 100, pointBefore(points.zeta))).toBeUndefined();
    expect(await atlasAt(log, 100, points.zeta)).toEqual({
      json: {
        id: 100,
        name: 'Zeta atlas',
        slug: 'zeta-atlas',
        description: 'an atlas',
        species: {
          id: 10,
          name: 'mus musculus',
          scientific_name: 'Mus musculus',
          category: { id: 1, name: 'rodents' },
        },
        is_official: false,
        verified: false,
        version: '',
        color: '',
        brains_count: 0,
        publication_url: '',
      },
      position: points.zeta.position,
    });
    const count = async (id: number, point: ReplayPoint) =>
      (await atlasAt(log, id, point))!.json.brains_count;
    expect(await count(100, points.b3)).toBe(2);
    expect(await count(100, points.moved)).toBe(1);
    expect(await count(102, points.moved)).toBe(1);
    expect(await count(100, points.deleted)).toBe(0);
    expect(await count(101, points.deleted)).toBe(1);
  });

  test('reads only the streams of brains that ever named it', async () => {
    const { log, points } = world();
    await atlasAt(log, 101, points.deleted);
    expect(log.streamReads.filter((s) => s.startsWith('brain-'))).toEqual(['brain-1001']);
  });
});
