-- The counts per placement of the live PUBLIC documents (visibility as stored: an embargo whose
-- time has passed is counted at query time until its EmbargoLifted turns it public here), kept like
-- 0001_search_count_deltas.sql by the triggers of every generation of the v5 layout on (they have
-- `visibility`; older generations keep calling search_count_deltas). A total or facet then adds the
-- few non-public documents the viewer may see, counted at query time (searchQuerySql.ts), so no
-- kept count ever holds a brain someone may not see.
CREATE OR REPLACE FUNCTION rm.search_public_count_deltas() RETURNS trigger LANGUAGE plpgsql AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE format($sql$
      INSERT INTO %s AS c (species_id, atlas_id, category_id, verified, n)
      SELECT species_id, atlas_id, category_id, verified, sum(delta) FROM (
        SELECT species_id, atlas_id, category_id, verified, 1 AS delta FROM new_rows WHERE NOT removed AND visibility = 'public'
      ) d
      GROUP BY species_id, atlas_id, category_id, verified HAVING sum(delta) <> 0
      ORDER BY species_id, atlas_id, category_id, verified
      ON CONFLICT (species_id, atlas_id, category_id, verified) DO UPDATE SET n = c.n + EXCLUDED.n
    $sql$, TG_ARGV[0]);
  ELSIF TG_OP = 'UPDATE' THEN
    EXECUTE format($sql$
      INSERT INTO %s AS c (species_id, atlas_id, category_id, verified, n)
      SELECT species_id, atlas_id, category_id, verified, sum(delta) FROM (
        SELECT species_id, atlas_id, category_id, verified, -1 AS delta FROM old_rows WHERE NOT removed AND visibility = 'public'
        UNION ALL
        SELECT species_id, atlas_id, category_id, verified, 1 AS delta FROM new_rows WHERE NOT removed AND visibility = 'public'
      ) d
      GROUP BY species_id, atlas_id, category_id, verified HAVING sum(delta) <> 0
      ORDER BY species_id, atlas_id, category_id, verified
      ON CONFLICT (species_id, atlas_id, category_id, verified) DO UPDATE SET n = c.n + EXCLUDED.n
    $sql$, TG_ARGV[0]);
  ELSE
    EXECUTE format($sql$
      INSERT INTO %s AS c (species_id, atlas_id, category_id, verified, n)
      SELECT species_id, atlas_id, category_id, verified, sum(delta) FROM (
        SELECT species_id, atlas_id, category_id, verified, -1 AS delta FROM old_rows WHERE NOT removed AND visibility = 'public'
      ) d
      GROUP BY species_id, atlas_id, category_id, verified HAVING sum(delta) <> 0
      ORDER BY species_id, atlas_id, category_id, verified
      ON CONFLICT (species_id, atlas_id, category_id, verified) DO UPDATE SET n = c.n + EXCLUDED.n
    $sql$, TG_ARGV[0]);
  END IF;
  -- A placement nothing has any more leaves no row: the counts are then the same whatever batches
  -- built them (a rebuild compares equal row for row). Locked in key order, like the upsert; by
  -- ctid, since a NULL (no atlas) never equals itself.
  EXECUTE format($sql$
    DELETE FROM %1$s WHERE n = 0 AND ctid = ANY(ARRAY(
      SELECT ctid FROM %1$s WHERE n = 0 ORDER BY species_id, atlas_id, category_id, verified FOR UPDATE))
  $sql$, TG_ARGV[0]);
  RETURN NULL;
END
$function$;
