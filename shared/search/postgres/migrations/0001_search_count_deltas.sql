-- The counts per placement (species, atlas, category, verified) of the live documents, kept by the
-- statement-level triggers of every generation's documents table (searchTables.ts); each trigger
-- names its generation's counts table as argument (TG_ARGV[0]). The transition tables new_rows and
-- old_rows are visible to the dynamic statements too. The changed rows' deltas are added in key
-- order: writers that touch the same counts lock them in the same order and cannot deadlock.
CREATE OR REPLACE FUNCTION rm.search_count_deltas() RETURNS trigger LANGUAGE plpgsql AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE format($sql$
      INSERT INTO %s AS c (species_id, atlas_id, category_id, verified, n)
      SELECT species_id, atlas_id, category_id, verified, sum(delta) FROM (
        SELECT species_id, atlas_id, category_id, verified, 1 AS delta FROM new_rows WHERE NOT removed
      ) d
      GROUP BY species_id, atlas_id, category_id, verified HAVING sum(delta) <> 0
      ORDER BY species_id, atlas_id, category_id, verified
      ON CONFLICT (species_id, atlas_id, category_id, verified) DO UPDATE SET n = c.n + EXCLUDED.n
    $sql$, TG_ARGV[0]);
  ELSIF TG_OP = 'UPDATE' THEN
    EXECUTE format($sql$
      INSERT INTO %s AS c (species_id, atlas_id, category_id, verified, n)
      SELECT species_id, atlas_id, category_id, verified, sum(delta) FROM (
        SELECT species_id, atlas_id, category_id, verified, -1 AS delta FROM old_rows WHERE NOT removed
        UNION ALL
        SELECT species_id, atlas_id, category_id, verified, 1 AS delta FROM new_rows WHERE NOT removed
      ) d
      GROUP BY species_id, atlas_id, category_id, verified HAVING sum(delta) <> 0
      ORDER BY species_id, atlas_id, category_id, verified
      ON CONFLICT (species_id, atlas_id, category_id, verified) DO UPDATE SET n = c.n + EXCLUDED.n
    $sql$, TG_ARGV[0]);
  ELSE
    EXECUTE format($sql$
      INSERT INTO %s AS c (species_id, atlas_id, category_id, verified, n)
      SELECT species_id, atlas_id, category_id, verified, sum(delta) FROM (
        SELECT species_id, atlas_id, category_id, verified, -1 AS delta FROM old_rows WHERE NOT removed
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
