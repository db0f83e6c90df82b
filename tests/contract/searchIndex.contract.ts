import type { GlobalPosition } from '#shared/eventStore/eventStore';
import {
  canSeeBrain,
  effectiveVisibility,
  type Viewer,
  type Visibility,
} from '#shared/domain/brains/visibility';
import { orderFacetCounts } from '#shared/search/facetOrder';
import type {
  BrainSearchDocument,
  FacetCount,
  SearchFacet,
  SearchFilters,
  SearchIndex,
  SearchQuery,
} from '#shared/search/searchIndex';

/**
 * The SearchIndex contract: every adapter runs this same suite (tests/contract/searchIndex.*.int.test.ts).
 */
export interface SearchIndexContractFixture {
  /** A fresh, installed, empty index per call; whose writes are visible to the next query. */
  create(): Promise<SearchIndex>;
}

const at = (n: number): GlobalPosition => ({ commit: BigInt(n), prepare: BigInt(n) });

function brain(brainId: number, fields: Partial<BrainSearchDocument> = {}): BrainSearchDocument {
  return {
    brainId,
    readableId: `brain-${brainId}`,
    name: `Specimen ${brainId}`,
    description: '',
    speciesId: 1,
    speciesName: 'Mouse',
    scientificName: 'Mus musculus',
    atlasId: 10,
    atlasName: 'Reference atlas',
    categoryId: 100,
    categoryName: 'Rodents',
    verified: true,
    uploaderId: 1000,
    dateUploaded: new Date(Date.UTC(2024, 0, 1) + brainId * 60_000),
    visibility: 'public',
    embargoUntil: null,
    readers: [fields.uploaderId ?? 1000],
    ...fields,
  };
}

export function describeSearchIndexContract(name: string, fixture: SearchIndexContractFixture): void {
  describe(`SearchIndex contract: ${name}`, () => {
    let index: SearchIndex;
    let nextPosition = 1;

    /** Upserts at fresh, increasing positions. */
    const put = (...docs: BrainSearchDocument[]): Promise<void> =>
      index.upsert(docs.map((document) => ({ document, position: at(nextPosition++) })));
    const ids = async (query: Partial<SearchQuery>): Promise<readonly number[]> =>
      (await index.query({ limit: 50, offset: 0, ...query })).ids;

    beforeEach(async () => {
      index = await fixture.create();
    });

    test('an empty index answers with nothing, and installing again changes nothing', async () => {
      await index.install();
      await expect(index.query({ limit: 10, offset: 0 })).resolves.toEqual({ total: 0, ids: [] });
      await expect(index.query({ text: 'mouse', limit: 10, offset: 0 })).resolves.toEqual({
        total: 0,
        ids: [],
      });
    });

    test('without text: newest first (then highest id), paged, with the exact total', async () => {
      const sameMoment = new Date('2024-06-01T00:00:00Z');
      await put(
        brain(1, { dateUploaded: new Date('2024-01-01T00:00:00Z') }),
        brain(2, { dateUploaded: new Date('2024-03-01T00:00:00Z') }),
        brain(3, { dateUploaded: sameMoment }),
        brain(4, { dateUploaded: sameMoment }),
        brain(5, { dateUploaded: new Date('2024-02-01T00:00:00Z') }),
      );

      expect(await index.query({ limit: 2, offset: 0 })).toEqual({ total: 5, ids: [4, 3] });
      expect(await index.query({ limit: 2, offset: 2 })).toEqual({ total: 5, ids: [2, 5] });
      expect(await index.query({ limit: 2, offset: 4 })).toEqual({ total: 5, ids: [1] });
      expect(await index.query({ limit: 2, offset: 9 })).toEqual({ total: 5, ids: [] });
      expect(await index.query({ text: '   ', limit: 10, offset: 0 })).toEqual({
        total: 5,
        ids: [4, 3, 2, 5, 1],
      });
    });

    test('each searchable field finds its brain', async () => {
      await put(
        brain(1, { name: 'Cerebellum lobule' }),
        brain(2, { description: 'Stained with nissl for cytoarchitecture' }),
        brain(3, { readableId: 'zebrafish-larva-7dpf' }),
        brain(4, { speciesName: 'Marmoset', scientificName: 'Callithrix jacchus' }),
        brain(5, { atlasName: 'Waxholm space' }),
        brain(6, { categoryName: 'Primates' }),
      );

      expect(await ids({ text: 'cerebellum' })).toEqual([1]);
      expect(await ids({ text: 'nissl' })).toEqual([2]);
      expect(await ids({ text: 'zebrafish-larva-7dpf' })).toEqual([3]);
      expect(await ids({ text: 'marmoset' })).toEqual([4]);
      expect(await ids({ text: 'Callithrix jacchus' })).toEqual([4]);
      expect(await ids({ text: 'waxholm' })).toEqual([5]);
      expect(await ids({ text: 'PRIMATES' })).toEqual([6]);
      expect(await ids({ text: 'no-such-word-anywhere' })).toEqual([]);
    });

    test('any substring of the name matches, however short, case-insensitively', async () => {
      await put(brain(1, { name: 'Hippocampus' }), brain(2, { name: 'Cortex' }));

      expect(await ids({ text: 'PP' })).toEqual([1]);
      expect(await ids({ text: 'x' })).toEqual([2]);
      expect(await ids({ text: 'ocamp' })).toEqual([1]);
      expect(await ids({ text: '50%' })).toEqual([]);
    });

    test('an exact numeric id matches that brain, first', async () => {
      await put(brain(41, { name: 'Area 42 mapping' }), brain(42, { name: 'Cortex' }), brain(43));

      const found = await ids({ text: '42' });

      expect(found[0]).toBe(42);
      expect(found).not.toContain(43);
    });

    test('a name with a typo is still found', async () => {
      await put(brain(1, { name: 'Human hippocampus' }), brain(2, { name: 'Olfactory bulb' }));

      expect(await ids({ text: 'hipocampus' })).toEqual([1]);
      expect(await ids({ text: 'olfactroy' })).toEqual([2]);
    });

    test('ranks exact readable_id and exact name first, then prefix, then full text, then typos', async () => {
      await put(
        brain(1, { name: 'Hipocampus slice' }),
        brain(2, { name: 'Mouse brain', description: 'Whole brain; the hippocampus is intact' }),
        brain(3, { name: 'Hippocampus formation' }),
        brain(4, { name: 'Hippocampus' }),
        brain(5, { name: 'Rat', readableId: 'hippocampus-rat' }),
        brain(6, { name: 'Unrelated' }),
      );

      const ranked = await ids({ text: 'Hippocampus' });

      expect(ranked[0]).toBe(4);
      expect(ranked.slice(1, 3).sort()).toEqual([3, 5]);
      expect(ranked.slice(3)).toEqual([2, 1]);
      expect((await ids({ text: 'hippocampus-rat' }))[0]).toBe(5);
    });

    test('filters combine with AND, a list of values matches any of them, with and without text', async () => {
      await put(
        brain(1, { speciesId: 1, verified: true, uploaderId: 7, name: 'Alpha cortex' }),
        brain(2, { speciesId: 1, verified: false, uploaderId: 7, name: 'Beta cortex' }),
        brain(3, { speciesId: 2, verified: true, uploaderId: 7, name: 'Gamma cortex' }),
        brain(4, { speciesId: 2, verified: true, uploaderId: 8, name: 'Delta cortex', atlasId: 11 }),
        brain(5, {
          speciesId: null,
          atlasId: null,
          verified: true,
          uploaderId: 7,
          name: 'Epsilon',
          categoryId: 101,
        }),
      );

      expect(await ids({ filters: { speciesIds: [1], verified: true } })).toEqual([1]);
      expect(await ids({ filters: { speciesIds: [1, 2], uploaderId: 7 } })).toEqual([3, 2, 1]);
      expect(await ids({ filters: { verified: true, uploaderId: 7 } })).toEqual([5, 3, 1]);
      expect(await ids({ filters: { atlasIds: [11] } })).toEqual([4]);
      expect(await ids({ filters: { categoryIds: [101] } })).toEqual([5]);
      expect(await ids({ text: 'cortex', filters: { speciesIds: [2], uploaderId: 7 } })).toEqual([3]);
      expect(
        (await index.query({ text: 'cortex', filters: { verified: true }, limit: 1, offset: 0 })).total,
      ).toBe(3);
      expect(await ids({ filters: { speciesIds: [] } })).toEqual([]);
    });

    test('facets count per value under the text and the filters; brains without a value are not counted', async () => {
      await put(
        brain(1, { speciesId: 1, atlasId: 10, categoryId: 100, verified: true, name: 'Visual cortex' }),
        brain(2, { speciesId: 1, atlasId: 10, categoryId: 100, verified: false, name: 'Motor cortex' }),
        brain(3, { speciesId: 2, atlasId: 20, categoryId: 100, verified: true, name: 'Auditory cortex' }),
        brain(4, { speciesId: 2, atlasId: 20, categoryId: 200, verified: true, name: 'Striatum' }),
        brain(5, {
          speciesId: null,
          atlasId: null,
          categoryId: 200,
          verified: false,
          name: 'Unmapped cortex',
        }),
      );
      const facets = ['species', 'atlas', 'category', 'verified'] as const;

      const all = await index.query({ limit: 0, offset: 0, facets });
      const cortex = await index.query({ text: 'cortex', limit: 1, offset: 0, facets });
      const filtered = await index.query({
        text: 'cortex',
        filters: { verified: true },
        limit: 10,
        offset: 0,
        facets,
      });

      expect(all).toEqual({
        total: 5,
        ids: [],
        facets: {
          species: [
            { value: 1, count: 2 },
            { value: 2, count: 2 },
          ],
          atlas: [
            { value: 10, count: 2 },
            { value: 20, count: 2 },
          ],
          category: [
            { value: 100, count: 3 },
            { value: 200, count: 2 },
          ],
          verified: [
            { value: true, count: 3 },
            { value: false, count: 2 },
          ],
        },
      });
      expect(cortex.total).toBe(4);
      expect(cortex.facets).toEqual({
        species: [
          { value: 1, count: 2 },
          { value: 2, count: 1 },
        ],
        atlas: [
          { value: 10, count: 2 },
          { value: 20, count: 1 },
        ],
        category: [
          { value: 100, count: 3 },
          { value: 200, count: 1 },
        ],
        verified: [
          { value: false, count: 2 },
          { value: true, count: 2 },
        ],
      });
      expect(filtered.facets).toEqual({
        species: [
          { value: 1, count: 1 },
          { value: 2, count: 1 },
        ],
        atlas: [
          { value: 10, count: 1 },
          { value: 20, count: 1 },
        ],
        category: [{ value: 100, count: 2 }],
        verified: [{ value: true, count: 2 }],
      });
      const speciesOnly = await index.query({
        filters: { speciesIds: [2] },
        limit: 10,
        offset: 0,
        facets: ['category'],
      });
      expect(speciesOnly).toEqual({
        total: 2,
        ids: [4, 3],
        facets: {
          category: [
            { value: 100, count: 1 },
            { value: 200, count: 1 },
          ],
        },
      });
    });

    test('totals and facets follow updates and removals', async () => {
      await put(brain(1, { speciesId: 1 }), brain(2, { speciesId: 1 }), brain(3, { speciesId: 2 }));
      await put(brain(2, { speciesId: 2, verified: false }));
      await index.remove([{ brainId: 3, position: at(nextPosition++) }]);

      const all = await index.query({ limit: 10, offset: 0, facets: ['species', 'verified'] });

      expect(all).toEqual({
        total: 2,
        ids: [2, 1],
        facets: {
          species: [
            { value: 1, count: 1 },
            { value: 2, count: 1 },
          ],
          verified: [
            { value: false, count: 1 },
            { value: true, count: 1 },
          ],
        },
      });
    });

    test('an older or equal position never overwrites a newer document; a batch keeps its latest write', async () => {
      await index.upsert([{ document: brain(1, { name: 'Newest name' }), position: at(10) }]);
      await index.upsert([{ document: brain(1, { name: 'Stale name' }), position: at(9) }]);
      await index.upsert([{ document: brain(1, { name: 'Duplicate name' }), position: at(10) }]);
      await index.upsert([
        { document: brain(1, { name: 'Older commit' }), position: { commit: 9n, prepare: 99n } },
      ]);
      await index.upsert([
        { document: brain(2, { name: 'Second latest' }), position: at(21) },
        { document: brain(2, { name: 'Second early' }), position: at(20) },
      ]);

      expect(await ids({ text: 'newest' })).toEqual([1]);
      expect(await ids({ text: 'stale' })).toEqual([]);
      expect(await ids({ text: 'duplicate' })).toEqual([]);
      expect(await ids({ text: 'older' })).toEqual([]);
      expect(await ids({ text: 'second' })).toEqual([2]);
      expect(await ids({ text: 'latest' })).toEqual([2]);
      expect(await ids({ text: 'early' })).toEqual([]);
    });

    test('a removal is not undone by a stale upsert, nor applied over a newer document', async () => {
      await index.upsert([
        { document: brain(1, { name: 'Removed brain' }), position: at(5) },
        { document: brain(2, { name: 'Kept brain' }), position: at(8) },
      ]);
      await index.remove([
        { brainId: 1, position: at(6) },
        { brainId: 2, position: at(7) },
      ]);
      await index.upsert([{ document: brain(1, { name: 'Removed brain' }), position: at(5) }]);
      await index.remove([{ brainId: 1, position: at(6) }]);

      expect(await index.query({ text: 'brain', limit: 10, offset: 0 })).toEqual({ total: 1, ids: [2] });
      expect(await index.query({ limit: 10, offset: 0 })).toEqual({ total: 1, ids: [2] });

      await index.upsert([{ document: brain(1, { name: 'Restored brain' }), position: at(12) }]);
      expect(await ids({ text: 'restored' })).toEqual([1]);
    });

    test('text results page through the same ranking', async () => {
      await put(...Array.from({ length: 12 }, (_, i) => brain(i + 1, { name: `Cortex sample ${i + 1}` })));

      const whole = await index.query({ text: 'cortex', limit: 12, offset: 0 });
      const pages = [0, 5, 10].map((offset) => index.query({ text: 'cortex', limit: 5, offset }));
      const paged = (await Promise.all(pages)).flatMap((page) => page.ids);

      expect(whole.total).toBe(12);
      expect(new Set(whole.ids).size).toBe(12);
      expect(paged).toEqual(whole.ids);
    });

    test('an explicit sort wins over relevance and recency; the highest id breaks ties', async () => {
      await put(
        brain(1, { name: 'beta cortex', readableId: 'c-1', dateUploaded: new Date('2024-01-03T00:00:00Z') }),
        brain(2, { name: 'Alpha cortex', readableId: 'a-2', dateUploaded: new Date('2024-01-01T00:00:00Z') }),
        brain(3, { name: 'cortex', readableId: 'b-3', dateUploaded: new Date('2024-01-02T00:00:00Z') }),
        brain(4, { name: 'Beta cortex', readableId: 'd-4', dateUploaded: new Date('2024-01-02T00:00:00Z') }),
      );
      const byName = [{ field: 'name', descending: false }] as const;

      expect((await ids({ text: 'cortex' }))[0]).toBe(3);
      expect(await ids({ text: 'cortex', sort: byName })).toEqual([2, 4, 1, 3]);
      expect(await ids({ sort: byName })).toEqual([2, 4, 1, 3]);
      expect(await ids({ sort: [{ field: 'readable_id', descending: true }] })).toEqual([4, 1, 3, 2]);
      expect(await ids({ sort: [{ field: 'date_uploaded', descending: false }] })).toEqual([2, 4, 3, 1]);
      expect(
        await ids({ text: 'cortex', sort: [{ field: 'id', descending: false }], limit: 2, offset: 1 }),
      ).toEqual([2, 3]);
    });

    test('a rebuild answers nothing new until it is finished, then replaces the index at once', async () => {
      await put(brain(1, { name: 'Old cortex' }), brain(2, { name: 'Old striatum' }));
      const rebuild = await index.beginRebuild();
      await rebuild.upsert([
        { document: brain(2, { name: 'Rebuilt striatum' }), position: at(1) },
        { document: brain(3, { name: 'Rebuilt cortex' }), position: at(2) },
      ]);
      await rebuild.remove([{ brainId: 1, position: at(3) }]);

      expect(await index.query({ text: 'cortex', limit: 10, offset: 0 })).toEqual({ total: 1, ids: [1] });
      expect(await ids({ text: 'rebuilt' })).toEqual([]);

      await rebuild.finish();

      expect(await index.query({ limit: 10, offset: 0, facets: ['species'] })).toEqual({
        total: 2,
        ids: [3, 2],
        facets: { species: [{ value: 1, count: 2 }] },
      });
      expect(await ids({ text: 'rebuilt' })).toEqual([3, 2]);
      expect(await ids({ text: 'old' })).toEqual([]);
      await put(brain(4, { name: 'After the swap' }));
      expect(await ids({ text: 'swap' })).toEqual([4]);
    });

    test('an abandoned or superseded rebuild never shows; the live index answers until the swap', async () => {
      await put(brain(1, { name: 'Live cortex' }));
      const abandoned = await index.beginRebuild();
      await abandoned.upsert([{ document: brain(2, { name: 'Abandoned cortex' }), position: at(1) }]);
      await abandoned.abandon();
      const superseded = await index.beginRebuild();
      await superseded.upsert([{ document: brain(3, { name: 'Superseded cortex' }), position: at(1) }]);
      const current = await index.beginRebuild();
      await current.upsert([{ document: brain(1, { name: 'Live cortex' }), position: at(1) }]);

      await expect(superseded.finish()).rejects.toThrow();
      await put(brain(5, { name: 'Written while rebuilding' }));
      expect(await ids({ text: 'cortex' })).toEqual([1]);
      await current.finish();

      expect(await ids({ text: 'cortex' })).toEqual([1]);
      expect(await index.query({ limit: 10, offset: 0 })).toEqual({ total: 1, ids: [1] });
    });

    describe('visibility: whoever may not see a brain finds it nowhere, nor in any total or facet', () => {
      const HOUR = 3_600_000;
      const past = () => new Date(Date.now() - HOUR);
      const future = () => new Date(Date.now() + HOUR);
      const anonymous: Viewer = { userId: null, isStaff: false };
      const stranger: Viewer = { userId: 9999, isStaff: false };
      const uploader: Viewer = { userId: 1000, isStaff: false };
      const collaborator: Viewer = { userId: 2000, isStaff: false };
      const staff: Viewer = { userId: 5, isStaff: true };
      const facets = ['species', 'atlas', 'category', 'verified'] as const;

      /** 1 public, 2 private shared with 2000 (the only one of species 2), 3 embargoed until later, 4 embargoed until earlier, 5 private of another uploader. */
      async function catalogue(): Promise<void> {
        await put(
          brain(1, { name: 'Public cortex' }),
          brain(2, {
            name: 'Private cortex',
            visibility: 'private',
            readers: [1000, 2000],
            speciesId: 2,
            speciesName: 'Marmoset',
            verified: false,
          }),
          brain(3, {
            name: 'Embargoed cortex',
            visibility: 'embargoed',
            embargoUntil: future(),
            atlasId: 11,
          }),
          brain(4, {
            name: 'Released cortex',
            visibility: 'embargoed',
            embargoUntil: past(),
            categoryId: 101,
          }),
          brain(5, {
            name: 'Other private cortex',
            visibility: 'private',
            uploaderId: 3000,
            readers: [3000],
          }),
        );
      }
      const seen = async (viewer: Viewer | undefined, query: Partial<SearchQuery> = {}) => {
        const filters: SearchFilters = { ...query.filters, ...(viewer ? { viewer } : {}) };
        return index.query({ limit: 50, offset: 0, ...query, filters });
      };

      test('each caller finds exactly the brains they may see, with and without text, and the total says so', async () => {
        await catalogue();
        const expected: [Viewer | undefined, number[]][] = [
          [anonymous, [4, 1]],
          [stranger, [4, 1]],
          [uploader, [4, 3, 2, 1]],
          [collaborator, [4, 2, 1]],
          [{ userId: 3000, isStaff: false }, [5, 4, 1]],
          [staff, [5, 4, 3, 2, 1]],
          [undefined, [5, 4, 3, 2, 1]],
        ];
        for (const [viewer, visible] of expected)
          for (const text of [undefined, 'cortex', 'corte', 'cortx']) {
            const answer = await seen(viewer, { text, sort: [{ field: 'id', descending: true }] });
            expect({ viewer, text, ids: answer.ids, total: answer.total }).toEqual({
              viewer,
              text,
              ids: visible,
              total: visible.length,
            });
          }
        // The exact id or readable_id of a brain one may not see finds nothing.
        expect((await seen(anonymous, { text: '2' })).ids).not.toContain(2);
        expect(await seen(stranger, { text: 'brain-3' })).toEqual({ total: 0, ids: [] });
        expect((await seen(collaborator, { text: 'brain-2' })).ids).toEqual([2]);
      });

      test('facets count only what the caller may see: a value only a hidden brain has is absent', async () => {
        await catalogue();
        for (const text of [undefined, 'cortex']) {
          const anon = await seen(anonymous, { text, facets, limit: 0 });
          expect(anon.total).toBe(2);
          expect(anon.facets).toEqual({
            species: [{ value: 1, count: 2 }],
            atlas: [{ value: 10, count: 2 }],
            category: [
              { value: 100, count: 1 },
              { value: 101, count: 1 },
            ],
            verified: [{ value: true, count: 2 }],
          });
          const shared = await seen(collaborator, { text, facets, limit: 0 });
          expect(shared.facets?.species).toEqual([
            { value: 1, count: 2 },
            { value: 2, count: 1 },
          ]);
          expect(shared.facets?.verified).toEqual([
            { value: true, count: 2 },
            { value: false, count: 1 },
          ]);
          const all = await seen(staff, { text, facets, limit: 0 });
          expect(all.total).toBe(5);
          expect(all.facets?.atlas).toEqual([
            { value: 10, count: 4 },
            { value: 11, count: 1 },
          ]);
        }
        // Under a placement filter, and under the uploader filter, the same rule.
        expect(await seen(anonymous, { filters: { speciesIds: [2] }, facets: ['species'] })).toEqual({
          total: 0,
          ids: [],
          facets: { species: [] },
        });
        expect(await seen(stranger, { filters: { uploaderId: 3000 }, facets: ['species'] })).toEqual({
          total: 0,
          ids: [],
          facets: { species: [] },
        });
        expect((await seen(collaborator, { filters: { uploaderId: 1000, verified: false } })).ids).toEqual([
          2,
        ]);
      });

      test('the visibility filter is the effective visibility, after the rule', async () => {
        await catalogue();
        const ids = async (viewer: Viewer, visibility: Visibility) =>
          (await seen(viewer, { filters: { visibility }, sort: [{ field: 'id', descending: true }] })).ids;
        expect(await ids(uploader, 'public')).toEqual([4, 1]);
        expect(await ids(uploader, 'private')).toEqual([2]);
        expect(await ids(uploader, 'embargoed')).toEqual([3]);
        expect(await ids(anonymous, 'private')).toEqual([]);
        expect(await ids(anonymous, 'embargoed')).toEqual([]);
        expect(await ids(staff, 'private')).toEqual([5, 2]);
        const counted = await seen(staff, { filters: { visibility: 'private' }, facets: ['species'] });
        expect(counted).toMatchObject({
          total: 2,
          facets: {
            species: [
              { value: 1, count: 1 },
              { value: 2, count: 1 },
            ],
          },
        });
        expect((await seen(staff, { text: 'cortex', filters: { visibility: 'embargoed' } })).ids).toEqual([
          3,
        ]);
      });

      test('sharing, unsharing, making public or private and lifting an embargo change who finds it at once', async () => {
        await catalogue();
        const stranger2 = { userId: 4000, isStaff: false };
        expect((await seen(stranger2, { text: 'private' })).ids).toEqual([]);
        await put(brain(2, { name: 'Private cortex', visibility: 'private', readers: [1000, 2000, 4000] }));
        expect((await seen(stranger2, { text: 'private' })).ids).toEqual([2]);
        expect((await seen(stranger2, { facets: ['species'], limit: 0 })).facets?.species).toEqual([
          { value: 1, count: 3 },
        ]);
        await put(brain(2, { name: 'Private cortex', visibility: 'private', readers: [1000] }));
        expect((await seen(stranger2, { text: 'private' })).ids).toEqual([]);
        expect((await seen(collaborator, {})).total).toBe(2);
        await put(
          brain(5, { name: 'Other private cortex', visibility: 'public', uploaderId: 3000, readers: [3000] }),
        );
        expect((await seen(anonymous, {})).ids).toEqual([5, 4, 1]);
        await put(
          brain(4, { name: 'Released cortex', visibility: 'public', embargoUntil: past(), categoryId: 101 }),
        );
        expect(await seen(anonymous, { facets: ['category'], limit: 0 })).toEqual({
          total: 3,
          ids: [],
          facets: {
            category: [
              { value: 100, count: 2 },
              { value: 101, count: 1 },
            ],
          },
        });
        await put(brain(1, { name: 'Public cortex', visibility: 'private', readers: [1000] }));
        expect((await seen(anonymous, { text: 'public' })).ids).toEqual([]);
        expect((await seen(anonymous, {})).total).toBe(2);
      });

      test('random catalogues, callers and filters agree with the rule (canSeeBrain) in ids, totals and facets', async () => {
        let state = 7;
        const random = () => {
          state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
          return state / 2 ** 31;
        };
        const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
        const users = [1, 2, 3, 4];
        const docs: BrainSearchDocument[] = Array.from({ length: 40 }, (_, i) => {
          const uploaderId = pick(users);
          const visibility = pick(['public', 'private', 'embargoed'] as const);
          return brain(i + 1, {
            name: `${pick(['Cortex', 'Pons', 'Cortical'])} sample ${i + 1}`,
            uploaderId,
            speciesId: pick([1, 2, 3]),
            atlasId: pick([10, 11, null]),
            categoryId: pick([100, 101]),
            verified: random() < 0.5,
            visibility,
            embargoUntil: visibility === 'embargoed' ? (random() < 0.5 ? past() : future()) : null,
            readers: [uploaderId, ...users.filter((u) => u !== uploaderId && random() < 0.3)],
          });
        });
        await put(...docs);
        const now = Date.now();
        const viewers: Viewer[] = [anonymous, staff, ...users.map((userId) => ({ userId, isStaff: false }))];
        const filterSets: SearchFilters[] = [
          {},
          { speciesIds: [1, 2] },
          { verified: true, categoryIds: [101] },
          { uploaderId: 2 },
        ];
        const textMatches = (d: BrainSearchDocument, text: string | undefined) =>
          text === undefined || d.name.toLowerCase().includes(text);
        for (const viewer of viewers)
          for (const filters of filterSets)
            for (const visibility of [undefined, 'public', 'private', 'embargoed'] as const)
              for (const text of [undefined, 'pons']) {
                const expected = docs
                  .filter((d) =>
                    canSeeBrain(
                      {
                        ...d,
                        embargoUntil: d.embargoUntil?.toISOString() ?? null,
                        collaboratorIds: d.readers,
                      },
                      viewer,
                      now,
                    ),
                  )
                  .filter(
                    (d) =>
                      visibility === undefined ||
                      effectiveVisibility(
                        { ...d, embargoUntil: d.embargoUntil?.toISOString() ?? null },
                        now,
                      ) === visibility,
                  )
                  .filter((d) => !filters.speciesIds || filters.speciesIds.includes(d.speciesId!))
                  .filter((d) => !filters.categoryIds || filters.categoryIds.includes(d.categoryId))
                  .filter((d) => filters.verified === undefined || d.verified === filters.verified)
                  .filter((d) => filters.uploaderId === undefined || d.uploaderId === filters.uploaderId)
                  .filter((d) => textMatches(d, text));
                const counts = (
                  facet: SearchFacet,
                  value: (d: BrainSearchDocument) => number | boolean | null,
                ): FacetCount[] => {
                  const tally = new Map<number | boolean, number>();
                  for (const d of expected) {
                    const v = value(d);
                    if (v !== null) tally.set(v, (tally.get(v) ?? 0) + 1);
                  }
                  return orderFacetCounts([...tally].map(([v, count]) => ({ value: v, count })));
                };
                const answer = await seen(viewer, {
                  text,
                  filters: { ...filters, visibility },
                  facets,
                  sort: [{ field: 'id', descending: false }],
                });
                expect({ viewer, filters, visibility, text, ...answer }).toEqual({
                  viewer,
                  filters,
                  visibility,
                  text,
                  total: expected.length,
                  ids: expected.map((d) => d.brainId),
                  facets: {
                    species: counts('species', (d) => d.speciesId),
                    atlas: counts('atlas', (d) => d.atlasId),
                    category: counts('category', (d) => d.categoryId),
                    verified: counts('verified', (d) => d.verified),
                  },
                });
              }
      });
    });

    test('an invalid page is refused', async () => {
      await expect(index.query({ limit: -1, offset: 0 })).rejects.toThrow(RangeError);
      await expect(index.query({ limit: 10, offset: 1.5 })).rejects.toThrow(RangeError);
    });
  });
}
