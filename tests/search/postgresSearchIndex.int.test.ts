import pg from 'pg';
import { provisionDatabase } from '#shared/infra/postgres/provisionDatabase';
import { ensureLoginRoles } from '#shared/infra/postgres/superuserAccess';
import {
  createPostgresSearchIndex,
  createPostgresSearchReader,
} from '#shared/search/postgres/postgresSearchIndex';
import { searchSql } from '#shared/search/postgres/searchQuerySql';
import { searchTableNames } from '#shared/search/postgres/searchTables';
import type {
  BrainSearchDocument,
  SearchFilters,
  SearchIndex,
  SearchQuery,
  SearchReader,
  SearchUpsert,
} from '#shared/search/searchIndex';
import { parseSearchText } from '#shared/search/searchText';
import { splitRoles } from '#tests/support/splitRoles';
import { serverUrl } from '#tests/support/testPostgres';

/** The service connects as a role that is not a superuser: pg_trgm and btree_gin must still install (they are trusted). */
const { roles, passwords, database, urlFor } = splitRoles('t_search');

let appPool: pg.Pool;
let index: SearchIndex;

/** A small deterministic generator: the same "random" catalogue on every run. */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function document(brainId: number, random: () => number): BrainSearchDocument {
  const speciesId = random() < 0.1 ? null : 1 + Math.floor(random() * 4);
  return {
    brainId,
    readableId: `brain-${brainId}`,
    name: `Sample ${brainId}`,
    description: '',
    speciesId,
    speciesName: speciesId === null ? null : `Species ${speciesId}`,
    scientificName: null,
    atlasId: speciesId === null ? null : 10 + Math.floor(random() * 3),
    atlasName: null,
    categoryId: 100 + Math.floor(random() * 3),
    categoryName: 'Category',
    verified: random() < 0.5,
    uploaderId: 1,
    dateUploaded: new Date(Date.UTC(2024, 0, 1) + brainId * 1000),
    visibility: 'public',
    embargoUntil: null,
    readers: [1],
  };
}

beforeAll(async () => {
  const superuser = new pg.Client({ connectionString: serverUrl() });
  await superuser.connect();
  try {
    await ensureLoginRoles(superuser, passwords);
  } finally {
    await superuser.end();
  }
  await provisionDatabase({ superuserUrl: serverUrl(), database, roles, ownerSchema: 'event_store' });
  appPool = new pg.Pool({ connectionString: urlFor(roles.app), max: 2 });
  index = createPostgresSearchIndex({ pool: appPool });
});

afterAll(async () => {
  await appPool?.end();
});

test("the service's own role (not a superuser) installs pg_trgm, btree_gin and the index, and typo search works", async () => {
  const { rows } = await appPool.query<{ rolsuper: boolean }>(
    'SELECT rolsuper FROM pg_roles WHERE rolname = current_user',
  );
  expect(rows[0]?.rolsuper).toBe(false);

  await index.install();
  await index.upsert([
    {
      document: { ...document(1, generator(1)), name: 'Somatosensory cortex' },
      position: { commit: 1n, prepare: 1n },
    },
  ]);

  const extensions = await appPool.query(
    "SELECT extname FROM pg_extension WHERE extname IN ('pg_trgm', 'btree_gin') ORDER BY 1",
  );
  expect(extensions.rows.map((r) => r.extname)).toEqual(['btree_gin', 'pg_trgm']);
  expect((await index.query({ text: 'somatosensry', limit: 10, offset: 0 })).ids).toEqual([1]);
});

test('the kept counts (totals and facets under placement filters) equal a count over the documents after mixed batches', async () => {
  await index.install();
  const random = generator(42);
  let position = 10n;
  for (let round = 0; round < 20; round++) {
    const ids = Array.from({ length: 25 }, () => 1 + Math.floor(random() * 60));
    await index.upsert(
      ids.map((id) => ({ document: document(id, random), position: { commit: position++, prepare: 0n } })),
    );
    const removed = Array.from({ length: 5 }, () => 1 + Math.floor(random() * 60));
    await index.remove(
      removed.map((brainId) => ({ brainId, position: { commit: position++, prepare: 0n } })),
    );
  }
  const facets = ['species', 'atlas', 'category', 'verified'] as const;
  const filters: SearchFilters[] = [
    {},
    { speciesIds: [1] },
    { speciesIds: [2, 3], verified: true },
    { atlasIds: [10, 12], categoryIds: [101] },
    { categoryIds: [100], verified: false },
    { speciesIds: [] },
  ];

  for (const filter of filters) {
    const kept = await index.query({ filters: filter, limit: 5, offset: 1, facets });
    // Every document has uploader 1: the same question with it takes the path counting documents.
    const counted = await index.query({ filters: { ...filter, uploaderId: 1 }, limit: 5, offset: 1, facets });

    expect(kept).toEqual(counted);
  }
  expect((await index.query({ limit: 0, offset: 0 })).total).toBeGreaterThan(0);
});

describe("substrings and typos through the dictionary of the names' words", () => {
  let words: SearchIndex;
  let position = 1n;
  const put = (brainId: number, name: string) =>
    words.upsert([
      {
        document: { ...document(brainId, generator(brainId)), name },
        position: { commit: position++, prepare: 0n },
      },
    ]);
  const ids = async (text: string) => (await words.query({ text, limit: 10, offset: 0 })).ids;

  beforeAll(async () => {
    words = createPostgresSearchIndex({ pool: appPool, name: 'dictionary_test' });
    await words.install();
  });

  test('a rename or a removal takes the old words out of the matches; new words match at once', async () => {
    await put(1, 'Visual hippocampus');
    await put(2, 'Motor cortex');
    expect(await ids('ocamp')).toEqual([1]);
    expect(await ids('hipocampus')).toEqual([1]);

    await put(1, 'Dorsal amygdala');

    expect(await ids('ocamp')).toEqual([]);
    expect(await ids('hipocampus')).toEqual([]);
    expect(await ids('YGDAL')).toEqual([1]);
    expect(await ids('amygdaa')).toEqual([1]);

    await words.remove([{ brainId: 1, position: { commit: position++, prepare: 0n } }]);
    expect(await ids('ygdal')).toEqual([]);
    await put(3, 'Hippocampus, CA1 field');
    expect(await ids('ocamp')).toEqual([3]);
  });

  test('a text that is not one word is looked for in the whole name; a typo in any word of several is found', async () => {
    await put(10, 'CA1-CA3 border (left)');
    await put(11, 'Ventral striatum sample');

    expect(await ids('a1-ca')).toEqual([10]);
    expect(await ids('3 border (')).toEqual([10]);
    expect(await ids('ca3')).toEqual([10]);
    expect(await ids('ventral striatm')).toEqual([11]);
    expect(await ids('ventrl striatum')).toEqual([11]);
    expect(await ids('ventral thalamus')).toEqual([]);
  });

  test('the dictionary holds the words of the live names, lowercased, each with its count', async () => {
    await put(12, 'Cortex, cortex and pons');
    await put(11, 'Ventral pons');
    const dictionary = async () =>
      (
        await appPool.query<{ word: string; n: string }>(
          'SELECT word, n FROM dictionary_test_words ORDER BY word',
        )
      ).rows.map((r) => `${r.word}:${r.n}`);

    expect(await dictionary()).toEqual([
      ...['and:1', 'border:1', 'ca1:2', 'ca3:1', 'cortex:3', 'field:1', 'hippocampus:1', 'left:1'],
      ...['motor:1', 'pons:2', 'ventral:1'],
    ]);

    await words.remove(
      [12, 2].map((brainId) => ({ brainId, position: { commit: position++, prepare: 0n } })),
    );
    expect(await dictionary()).toEqual([
      ...['border:1', 'ca1:2', 'ca3:1', 'field:1', 'hippocampus:1', 'left:1', 'pons:1', 'ventral:1'],
    ]);
  });
});

describe('word prefixes matched as the lexemes of the dictionary they start', () => {
  const name = 'lexemes_test';
  const names = searchTableNames(name);
  const sources = { documents: names.documentsView, words: names.wordsView, lexemes: names.lexemesView };
  let lexemes: SearchIndex;
  let position = 1n;
  const put = (brainId: number, brainName: string, description = '') =>
    lexemes.upsert([
      {
        document: { ...document(brainId, generator(brainId)), name: brainName, description },
        position: { commit: position++, prepare: 0n },
      },
    ]);
  /** The dictionary, and the lexemes of the live documents counted from their vectors. */
  const dictionaries = async () => {
    const kept = await appPool.query<{ lexeme: string; n: string }>(
      `SELECT lexeme, n FROM ${names.lexemesView} ORDER BY lexeme`,
    );
    const counted = await appPool.query<{ lexeme: string; n: string }>(
      `SELECT l AS lexeme, count(*)::bigint AS n FROM ${names.documentsView} d
         CROSS JOIN unnest(tsvector_to_array(d.search_vector)) AS l WHERE NOT d.removed GROUP BY l ORDER BY l COLLATE "C"`,
    );
    return { kept: kept.rows, counted: counted.rows };
  };
  /** The statement's answer, or (`prefixes`) that of the same statement matching the prefixes themselves. */
  const answer = async (query: SearchQuery, prefixes: boolean) => {
    const statement = searchSql(query, parseSearchText(query.text)!, sources);
    const text = prefixes
      ? statement.text.replace('d.search_vector @@ e.match', 'd.search_vector @@ q.tsq')
      : statement.text;
    expect(text !== statement.text).toBe(prefixes);
    const { rows } = await appPool.query<{ ids: number[]; total: string }>({ ...statement, text });
    return { ids: rows[0]!.ids, total: Number(rows[0]!.total) };
  };

  beforeAll(async () => {
    lexemes = createPostgresSearchIndex({ pool: appPool, name });
    await lexemes.install();
  });

  test('the dictionary holds the lexemes of the live documents, each with its count, through renames and removals', async () => {
    await put(1, 'Motor-cortex left', 'cortical layers of the motor cortex');
    await put(2, "O'Brien's v1.2 sample", 'back\\slash');
    await put(3, 'Ventral pons');
    const { kept, counted } = await dictionaries();
    expect(kept).toEqual(counted);
    expect(kept.map((r) => r.lexeme)).toEqual(expect.arrayContaining(['motor-cortex', 'v1.2', 'back']));

    await put(1, 'Dorsal amygdala');
    await lexemes.remove([{ brainId: 3, position: { commit: position++, prepare: 0n } }]);
    const after = await dictionaries();
    expect(after.kept).toEqual(after.counted);
    expect(after.kept.map((r) => r.lexeme)).not.toContain('pons');
  });

  test('every text finds the same documents in the same order as the prefixes themselves: many lexemes, none, phrases, several words, quotes', async () => {
    // Brains 100..299: "Sample <id>" gives more than EXPANDED_LEXEMES lexemes starting with "1" and "2".
    await lexemes.upsert(
      Array.from({ length: 200 }, (_, i) => ({
        document: {
          ...document(100 + i, generator(100 + i)),
          name: `${i % 3 === 0 ? 'Cortical' : 'Cortex'} sample ${100 + i}`,
          description: i % 4 === 0 ? 'motor-cortex and corticospinal tract' : 'pons',
        },
        position: { commit: position++, prepare: 0n },
      })),
    );
    const texts = [
      'cort',
      'cortex',
      'corti',
      '1',
      '12',
      '2',
      'motor-cortex',
      'motor-cor',
      'cortex sample 1',
      'corticospinal tra',
      'zzzz',
      'cortex zzzz',
      "o'brien",
      'v1',
      'back\\',
      's',
    ];
    for (const text of texts)
      for (const filters of [{}, { speciesIds: [1, 2] }, { verified: true }]) {
        const query = { text, filters, limit: 500, offset: 0 };
        expect({ text, filters, ...(await answer(query, false)) }).toEqual({
          text,
          filters,
          ...(await answer(query, true)),
        });
      }
    expect((await answer({ text: 'cort', limit: 500, offset: 0 }, false)).total).toBe(200);
  });
});

describe('an upgrade: search answers while the live generation still has the v4 layout', () => {
  const name = 'upgrade_test';
  const names = searchTableNames(name);
  let upgraded: SearchIndex;
  const catalogue: SearchUpsert[] = [
    'Dorsal hippocampus',
    'Hippocampus, CA1 field',
    'Somatosensory cortex',
    'Motor cortex (left)',
    'CA1-CA3 border',
    'Ventral striatum',
  ].map((brainName, i) => ({
    document: { ...document(i + 1, generator(i + 1)), name: brainName },
    position: { commit: BigInt(i + 1), prepare: 0n },
  }));
  const facets = ['species', 'atlas', 'category', 'verified'] as const;
  /** Substring (a word's and not), typo, exact (readable id, numeric id, name), full text, no text. */
  const texts = [
    'ocamp',
    'a1-ca',
    'hipocampus',
    'somatosensry cortex',
    'brain-3',
    '5',
    'ventral striatum',
    'cortex',
    'hippo',
    'ca1-ca3 bord',
    '',
  ];
  const viewer = { userId: 5, isStaff: false };
  const answers = async (reader: SearchReader) => {
    const answered = [];
    for (const text of texts) {
      const {
        ids,
        total,
        facets: counts,
      } = await reader.query({
        text,
        limit: 10,
        offset: 0,
        facets,
        filters: { viewer },
      });
      const privates = await reader.query({ text, limit: 10, offset: 0, filters: { visibility: 'private' } });
      answered.push({ text, ids, total, counts, privates });
    }
    return answered;
  };
  /** A reader whose statements are recorded by the layout they read (the v4 one asks `v5_live`). */
  const recordingReader = () => {
    const sent: (4 | 5)[] = [];
    const pool = {
      query: (statement: { text: string }) => {
        sent.push(statement.text.includes('v5_live') ? 4 : 5);
        return appPool.query(statement);
      },
    } as unknown as pg.Pool;
    return { sent, reader: createPostgresSearchReader({ pool, name }) };
  };

  /** The live generation as a v4 deployment left it: no visibility columns, every document counted. */
  async function makeLiveGenerationV4(): Promise<void> {
    const { rows } = await appPool.query<{ generation: number }>(
      `SELECT generation FROM ${names.generations} WHERE status = 'live'`,
    );
    const generation = rows[0]!.generation;
    const documents = names.documents(generation);
    await appPool.query(`DROP VIEW ${names.documentsView}`);
    await appPool.query(
      `ALTER TABLE ${documents} DROP COLUMN visibility, DROP COLUMN embargo_until, DROP COLUMN readers`,
    );
    await appPool.query(`CREATE VIEW ${names.documentsView} AS SELECT * FROM ${documents}`);
    for (const op of ['insert', 'update', 'delete']) {
      const referencing = {
        insert: 'NEW TABLE AS new_rows',
        update: 'OLD TABLE AS old_rows NEW TABLE AS new_rows',
        delete: 'OLD TABLE AS old_rows',
      }[op];
      await appPool.query(`DROP TRIGGER "count_${op}" ON ${documents}`);
      await appPool.query(
        `CREATE TRIGGER "count_${op}" AFTER ${op.toUpperCase()} ON ${documents} REFERENCING ${referencing}
         FOR EACH STATEMENT EXECUTE FUNCTION rm.search_count_deltas('${names.counts(generation)}')`,
      );
    }
  }

  beforeAll(async () => {
    upgraded = createPostgresSearchIndex({ pool: appPool, name });
    await upgraded.install();
  });

  test('searches and lists keep their answers through the rebuild, and the swap to v5 is picked up without a restart', async () => {
    await upgraded.upsert(catalogue);
    const v5Answers = await answers(upgraded);
    expect(v5Answers.map((a) => a.total)).toEqual([2, 1, 2, 1, 1, 1, 1, 2, 2, 1, 6]);
    expect(v5Answers.every((a) => a.privates.total === 0)).toBe(true);

    // A process that has seen v5 already, and one started during the upgrade.
    const seen = recordingReader();
    await seen.reader.query({ text: 'cortex', limit: 1, offset: 0 });
    expect(seen.sent).toEqual([5]);
    seen.sent.length = 0;
    await makeLiveGenerationV4();
    const started = recordingReader();
    for (const { reader } of [seen, started]) expect(await answers(reader)).toEqual(v5Answers);
    expect(seen.sent).toEqual([5, ...texts.flatMap(() => [4, 4])]);
    expect(started.sent).toEqual([5, ...texts.flatMap(() => [4, 4])]);

    const rebuild = await upgraded.beginRebuild();
    await rebuild.upsert(catalogue);
    // The v5 generation exists beside the live v4 one (as a projector's rebuild leaves it).
    expect(await answers(started.reader)).toEqual(v5Answers);
    await rebuild.finish();

    started.sent.length = 0;
    expect(await answers(started.reader)).toEqual(v5Answers);
    // The first query after the swap is answered by the v4 statement, which sees v5 live.
    expect(started.sent).toEqual([4, ...texts.flatMap(() => [5, 5]).slice(1)]);
  });
});

describe("each generation's own trigger functions", () => {
  const name = 'triggers_test';
  const names = searchTableNames(name);
  /** The trigger functions of the documents' triggers of a generation, by trigger name. */
  const triggerFunctions = async (generation: number): Promise<Record<string, string>> => {
    const { rows } = await appPool.query<{ tgname: string; fn: string }>(
      `SELECT tgname, tgfoid::regproc::text AS fn FROM pg_trigger
        WHERE tgrelid = $1::regclass AND NOT tgisinternal ORDER BY tgname`,
      [names.documents(generation)],
    );
    return Object.fromEntries(rows.map((row) => [row.tgname, row.fn]));
  };
  const companions = async (): Promise<string[]> => {
    const { rows } = await appPool.query<{ proname: string }>(
      `SELECT proname FROM pg_proc WHERE starts_with(proname, $1) ORDER BY proname`,
      [`${name}_g`],
    );
    return rows.map((row) => row.proname);
  };
  const liveGeneration = async (): Promise<number> =>
    Number(
      (await appPool.query(`SELECT generation FROM ${names.generations} WHERE status = 'live'`)).rows[0]
        .generation,
    );

  test('call functions with the tables written into their statements, which go with their generation', async () => {
    const triggers = createPostgresSearchIndex({ pool: appPool, name });
    await triggers.install();
    const first = await liveGeneration();
    const own = (generation: number, kind: string) => `rm.${name}_g${generation}__${kind}`;
    const expected = (generation: number) =>
      Object.fromEntries(
        (['count', 'lexemes', 'words'] as const).flatMap((prefix) =>
          (['delete', 'insert', 'update'] as const).map((op) => [
            `${prefix}_${op}`,
            own(generation, prefix === 'count' ? 'counts' : prefix),
          ]),
        ),
      );
    expect(await triggerFunctions(first)).toEqual(expected(first));
    const source = (
      await appPool.query<{ src: string }>(`SELECT prosrc AS src FROM pg_proc WHERE oid = $1::regproc`, [
        own(first, 'words'),
      ])
    ).rows[0]!.src;
    expect(source).not.toMatch(/EXECUTE/i);
    expect(source).toContain(names.words(first));

    // Kept exact through an insert, an upsert that renames, and a removal, as before.
    await triggers.upsert([
      {
        document: { ...document(1, generator(1)), name: 'Left cortex' },
        position: { commit: 1n, prepare: 0n },
      },
    ]);
    await triggers.upsert([
      {
        document: { ...document(1, generator(1)), name: 'Right cortex' },
        position: { commit: 2n, prepare: 0n },
      },
    ]);
    const words = async () =>
      (await appPool.query(`SELECT word, n::int FROM ${names.wordsView} ORDER BY word`)).rows;
    expect(await words()).toEqual([
      { word: 'cortex', n: 1 },
      { word: 'right', n: 1 },
    ]);

    const rebuild = await triggers.beginRebuild();
    const second = first + 1;
    expect(await triggerFunctions(second)).toEqual(expected(second));
    await rebuild.upsert([
      {
        document: { ...document(1, generator(1)), name: 'Right cortex' },
        position: { commit: 2n, prepare: 0n },
      },
    ]);
    await rebuild.finish();
    // The old generation's tables are dropped, and its functions with them.
    expect(await companions()).toEqual(
      ['counts', 'lexemes', 'words'].map((kind) => `${name}_g${second}__${kind}`),
    );
    expect(await words()).toEqual([
      { word: 'cortex', n: 1 },
      { word: 'right', n: 1 },
    ]);
    await triggers.remove([{ brainId: 1, position: { commit: 3n, prepare: 0n } }]);
    expect(await words()).toEqual([]);
  });
});
