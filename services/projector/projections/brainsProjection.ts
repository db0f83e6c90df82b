import { type Projection, type ProjectionContext, applyInRuns } from '#shared/projections/projection';
import {
  BRAIN_EVENT_TYPES,
  type BrainCreated,
  type BrainEvent,
  type BrainFields,
  createdVisibility,
} from '#shared/domain/brains/events';
import { isBrainCreated } from './brainMemberships';

/** Event field → column, for the fields a BrainUpdated may change (an own-property map). */
const COLUMNS: Readonly<Record<keyof BrainFields, string>> = {
  name: 'name',
  description: 'description',
  atlasId: 'atlas_id',
  speciesId: 'species_id',
  categoryId: 'category_id',
  isReference: 'is_reference',
  extraLink: 'extra_link',
  website: 'website',
  color: 'color',
  verified: 'verified',
  visibility: 'visibility',
  embargoUntil: 'embargo_until',
};

/** The placement columns brain_counts is keyed by; 0 stands for "none" (ids start at 1). */
const PLACEMENT = 'coalesce(atlas_id, 0), coalesce(species_id, 0), category_id, verified';

/**
 * A brains row's placement and what it adds to brain_counts (`sign` 1 or -1): brain_counts counts
 * public brains only. The few private and embargoed ones are counted at query time, by who may see
 * them (an embargo ends by the clock, with no event to move its brain into the counts).
 */
const counted = (sign: 1 | -1): string => `${PLACEMENT}, ${sign} * (visibility = 'public')::int AS delta`;

/**
 * Adds `delta` to the counts of the placements `source` (a CTE of brains rows) selects. Grouped
 * first: ON CONFLICT may touch each counts row only once per statement.
 */
const countDelta = (counts: string, source: string): string => `
  INSERT INTO ${counts} AS k (atlas_id, species_id, category_id, verified, brains)
  SELECT a, s, c, v, sum(delta) FROM ${source} GROUP BY a, s, c, v HAVING sum(delta) <> 0
  ON CONFLICT (atlas_id, species_id, category_id, verified)
  DO UPDATE SET brains = k.brains + excluded.brains`;

/**
 * Read model of brains: one row per live brain, with the stream revision for its weak ETag.
 * Indexes serve the list's filters, each with the default order (newest first), so a page is an
 * ordered index range; they include what the visibility rule reads (shared/query/brainVisibility)
 * so that the range stays index-only. brain_counts holds how many public brains each placement
 * (atlas, species, category, verified) has: the list's X-Total-Count for any combination of those
 * filters is a sum over a few hundred rows instead of a count over the brains (the atlas decides
 * species and category, so there are about twice as many rows as atlases), plus the non-public
 * brains the viewer may see, found through a partial index. brain_collaborators: who else may see
 * (and, as editors, change) a brain.
 */
export const brainsProjection: Projection = {
  name: 'brains',
  version: 3,
  tables: ['brains', 'brain_counts', 'brain_collaborators'],
  eventTypes: new Set(BRAIN_EVENT_TYPES),

  async createTables({ client, table }) {
    const brains = table('brains');
    await client.query(`
      CREATE TABLE ${brains} (
        id integer PRIMARY KEY,
        readable_id text NOT NULL UNIQUE,
        uuid uuid NOT NULL,
        name text NOT NULL,
        description text NOT NULL,
        atlas_id integer,
        species_id integer,
        category_id integer NOT NULL,
        is_reference boolean NOT NULL,
        extra_link text NOT NULL,
        website text NOT NULL,
        color text NOT NULL,
        verified boolean NOT NULL,
        uploader_id integer NOT NULL,
        file_upload_id text,
        date_uploaded timestamptz NOT NULL,
        visibility text NOT NULL,
        embargo_until timestamptz,
        revision bigint NOT NULL
      )`);
    const rule = 'INCLUDE (visibility, embargo_until, uploader_id)';
    await client.query(`CREATE INDEX ON ${brains} (date_uploaded DESC, id DESC) ${rule}`);
    for (const column of ['atlas_id', 'species_id', 'category_id', 'uploader_id', 'verified'])
      await client.query(`CREATE INDEX ON ${brains} (${column}, date_uploaded DESC, id DESC) ${rule}`);
    // The non-public brains (counted at query time) and the embargoes still to end (EmbargoClock).
    await client.query(
      `CREATE INDEX ON ${brains} (date_uploaded DESC, id DESC) ${rule} WHERE visibility <> 'public'`,
    );
    await client.query(`CREATE INDEX ON ${brains} (embargo_until) WHERE visibility = 'embargoed'`);
    await client.query(`
      CREATE TABLE ${table('brain_collaborators')} (
        brain_id integer NOT NULL,
        user_id integer NOT NULL,
        role text NOT NULL,
        added_at timestamptz NOT NULL,
        PRIMARY KEY (brain_id, user_id)
      )`);
    await client.query(`CREATE INDEX ON ${table('brain_collaborators')} (user_id, brain_id)`);
    await client.query(`
      CREATE TABLE ${table('brain_counts')} (
        atlas_id integer NOT NULL,
        species_id integer NOT NULL,
        category_id integer NOT NULL,
        verified boolean NOT NULL,
        brains bigint NOT NULL,
        PRIMARY KEY (atlas_id, species_id, category_id, verified)
      )`);
  },

  /**
   * Upgrading from v2: every brain of the live v2 tables was written before visibility existed, so
   * it is public and shared with nobody; the query side's rule reads them so until v3 swaps in.
   */
  compatibleViews(liveVersion, live) {
    if (liveVersion !== 2) return undefined;
    return {
      brains: `SELECT *, 'public'::text AS visibility, NULL::timestamptz AS embargo_until FROM ${live('brains')}`,
      brain_collaborators: `SELECT NULL::integer AS brain_id, NULL::integer AS user_id, NULL::text AS role,
        NULL::timestamptz AS added_at WHERE false`,
    };
  },

  apply: applyInRuns<BrainEvent, BrainCreated>(
    isBrainCreated,
    (ctx, created, recorded) =>
      createBrains(
        ctx,
        created,
        recorded.map((r) => r.streamRevision),
      ),
    async (ctx, event, recorded) => [await applyOne(ctx, event, recorded.streamRevision)],
  ),
};

const CREATED_COLUMNS = `id, readable_id, uuid, name, description, atlas_id, species_id, category_id,
  is_reference, extra_link, website, color, verified, uploader_id, file_upload_id, date_uploaded,
  visibility, embargo_until, revision`;

/** Created brains in one statement (rows as a JSON array of column → value), counted by placement. */
async function createBrains(
  { client, table }: ProjectionContext,
  created: readonly BrainCreated[],
  revisions: readonly bigint[],
): Promise<string[]> {
  const rows = created.map(({ data: d }, i) => ({
    id: d.brainId,
    readable_id: d.readableId,
    uuid: d.uuid,
    name: d.name,
    description: d.description,
    atlas_id: d.atlasId,
    species_id: d.speciesId,
    category_id: d.categoryId,
    is_reference: d.isReference,
    extra_link: d.extraLink,
    website: d.website,
    color: d.color,
    verified: d.verified,
    uploader_id: d.uploaderId,
    file_upload_id: d.fileUploadId,
    date_uploaded: d.createdAt,
    visibility: createdVisibility(d).visibility,
    embargo_until: createdVisibility(d).embargoUntil,
    revision: revisions[i]!.toString(),
  }));
  await client.query(
    `WITH created AS (
       INSERT INTO ${table('brains')} (${CREATED_COLUMNS})
       SELECT ${CREATED_COLUMNS} FROM json_populate_recordset(NULL::${table('brains')}, $1::json)
       RETURNING ${counted(1)}
     ) ${countDelta(table('brain_counts'), 'created AS x (a, s, c, v, delta)')}`,
    [JSON.stringify(rows)],
  );
  return created.map(({ data }) => `brain:${data.brainId}`);
}

/** Every event of a brain's stream moves its revision (its ETag), whatever it changes. */
async function bumpRevision(
  client: ProjectionContext['client'],
  brains: string,
  brainId: number,
  revision: bigint,
): Promise<void> {
  await client.query(`UPDATE ${brains} SET revision = $2 WHERE id = $1`, [brainId, revision.toString()]);
}

async function applyOne(
  { client, table }: ProjectionContext,
  event: BrainEvent,
  revision: bigint,
): Promise<string> {
  switch (event.type) {
    case 'BrainCreated':
      return (await createBrains({ client, table }, [event], [revision]))[0]!;
    case 'BrainUpdated': {
      const fields = Object.entries(event.data.changes).filter(([field]) => Object.hasOwn(COLUMNS, field));
      const assignments = fields.map(([field], i) => `${COLUMNS[field as keyof BrainFields]} = $${i + 3}`);
      // The CTEs share one snapshot: `before` sees the row as it was before `after` changed it.
      await client.query(
        `WITH before AS (SELECT ${counted(-1)} FROM ${table('brains')} WHERE id = $1),
           after AS (
             UPDATE ${table('brains')} SET ${['revision = $2', ...assignments].join(', ')} WHERE id = $1
             RETURNING ${counted(1)}
           ),
           moved (a, s, c, v, delta) AS (SELECT * FROM before UNION ALL SELECT * FROM after)
         ${countDelta(table('brain_counts'), 'moved')}`,
        [event.data.brainId, revision.toString(), ...fields.map(([, value]) => value as unknown)],
      );
      return `brain:${event.data.brainId}`;
    }
    case 'BrainDeleted':
      await client.query(
        `WITH deleted AS (DELETE FROM ${table('brains')} WHERE id = $1 RETURNING ${counted(-1)})
         ${countDelta(table('brain_counts'), 'deleted AS x (a, s, c, v, delta)')}`,
        [event.data.brainId],
      );
      await client.query(`DELETE FROM ${table('brain_collaborators')} WHERE brain_id = $1`, [
        event.data.brainId,
      ]);
      return `brain:${event.data.brainId}`;
    case 'EmbargoLifted':
      await client.query(
        `WITH before AS (SELECT ${counted(-1)} FROM ${table('brains')} WHERE id = $1),
           after AS (
             UPDATE ${table('brains')} SET visibility = 'public', revision = $2 WHERE id = $1
             RETURNING ${counted(1)}
           ),
           moved (a, s, c, v, delta) AS (SELECT * FROM before UNION ALL SELECT * FROM after)
         ${countDelta(table('brain_counts'), 'moved')}`,
        [event.data.brainId, revision.toString()],
      );
      return `brain:${event.data.brainId}`;
    case 'BrainCollaboratorAdded':
    case 'BrainCollaboratorRoleChanged': {
      const d = event.data;
      const addedAt = event.type === 'BrainCollaboratorAdded' ? event.data.addedAt : event.data.changedAt;
      await client.query(
        `INSERT INTO ${table('brain_collaborators')} (brain_id, user_id, role, added_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (brain_id, user_id) DO UPDATE SET role = excluded.role`,
        [d.brainId, d.userId, d.role, addedAt],
      );
      await bumpRevision(client, table('brains'), d.brainId, revision);
      return `brain:${d.brainId}`;
    }
    case 'BrainCollaboratorRemoved':
      await client.query(`DELETE FROM ${table('brain_collaborators')} WHERE brain_id = $1 AND user_id = $2`, [
        event.data.brainId,
        event.data.userId,
      ]);
      await bumpRevision(client, table('brains'), event.data.brainId, revision);
      return `brain:${event.data.brainId}`;
  }
}
