import type { Dirent } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { type Catalogue, resolvePlacement } from './catalogue';
import {
  type ImportDefaults,
  type ImportPlan,
  type PlanIssue,
  type PlannedScan,
  visibilityFields,
} from './importPlan';
import { portablePath } from './scanFormats';

/** A BIDS file name's parts: `sub-01_ses-02_T1w.nii.gz` → entities {sub: 01, ses: 02}, suffix T1w. */
export interface BidsName {
  readonly stem: string;
  readonly entities: ReadonlyMap<string, string>;
  readonly suffix: string;
}

const NIFTI = /\.nii(\.gz)?$/i;
/** What POST /api/brains/ takes as `sidecar` (as JSON). */
const MAX_SIDECAR_BYTES = 64 * 1024;

/** The entities and suffix of a BIDS file name, else undefined (not `key-value_…_suffix`). */
export function parseBidsName(fileName: string): BidsName | undefined {
  const stem = fileName.replace(NIFTI, '').replace(/\.json$/i, '');
  const parts = stem.split('_');
  const suffix = parts.pop() ?? '';
  if (!/^[a-zA-Z0-9]+$/.test(suffix)) return undefined;
  const entities = new Map<string, string>();
  for (const part of parts) {
    const match = /^([a-zA-Z0-9]+)-([a-zA-Z0-9+.]+)$/.exec(part);
    if (!match || entities.has(match[1]!)) return undefined;
    entities.set(match[1]!, match[2]!);
  }
  return { stem, entities, suffix };
}

/** True when `sidecar` applies to `image` under the BIDS inheritance principle. */
export function sidecarApplies(sidecar: BidsName, image: BidsName): boolean {
  if (sidecar.suffix !== image.suffix) return false;
  for (const [key, value] of sidecar.entities) if (image.entities.get(key) !== value) return false;
  return true;
}

/** participants.tsv: participant_id → species (the `species` column; "n/a" and blanks are none). */
export function parseParticipants(text: string): { species: Map<string, string>; issue?: string } {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '');
  const header = (lines.shift() ?? '').split('\t').map((h) => h.trim().toLowerCase());
  const id = header.indexOf('participant_id');
  const column = header.indexOf('species');
  const species = new Map<string, string>();
  if (id < 0) return { species, issue: 'participants.tsv has no participant_id column' };
  if (column < 0) return { species };
  for (const line of lines) {
    const cells = line.split('\t').map((c) => c.trim());
    const subject = cells[id] ?? '';
    const value = cells[column] ?? '';
    if (subject && value && value.toLowerCase() !== 'n/a')
      species.set(subject.startsWith('sub-') ? subject : `sub-${subject}`, value);
  }
  return { species };
}

const sortedEntries = async (dir: string): Promise<Dirent[]> =>
  (await readdir(dir, { withFileTypes: true }))
    .filter((e) => !e.name.startsWith('.'))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

/** The JSON files directly in a directory, with their parsed names. */
async function jsonFilesIn(dir: string): Promise<{ file: string; name: BidsName }[]> {
  return (await sortedEntries(dir))
    .filter((e) => e.isFile() && e.name.toLowerCase().endsWith('.json'))
    .flatMap((e) => {
      const name = parseBidsName(e.name);
      return name ? [{ file: path.join(dir, e.name), name }] : [];
    });
}

/**
 * A BIDS dataset: one brain per NIfTI image under `sub-*[/ses-*]/<datatype>/`, named by its
 * entities (`sub-01_ses-02_T1w`), with its JSON sidecar (inherited from upper levels, deeper ones
 * overriding) and its subject's species from participants.tsv, else `--species`.
 */
export async function bidsPlan(
  root: string,
  defaults: ImportDefaults,
  catalogue: Catalogue,
): Promise<ImportPlan> {
  const issues: PlanIssue[] = [];
  const fail = (file: string, column: string, message: string) =>
    void issues.push({ row: 0, file, column, message });
  let identity = `bids:${path.basename(root)}`;
  try {
    const description = JSON.parse(await readFile(path.join(root, 'dataset_description.json'), 'utf8')) as {
      Name?: unknown;
      DatasetDOI?: unknown;
    };
    const name = typeof description.Name === 'string' ? description.Name : path.basename(root);
    identity = `bids:${name}${typeof description.DatasetDOI === 'string' ? `:${description.DatasetDOI}` : ''}`;
  } catch (error) {
    fail('dataset_description.json', 'file', `not readable JSON: ${(error as Error).message}`);
  }
  let participants = new Map<string, string>();
  try {
    const parsed = parseParticipants(await readFile(path.join(root, 'participants.tsv'), 'utf8'));
    participants = parsed.species;
    if (parsed.issue) fail('participants.tsv', 'participant_id', parsed.issue);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      fail('participants.tsv', 'file', (error as Error).message);
  }

  const sidecarCache = new Map<string, Promise<Record<string, unknown> | undefined>>();
  const readSidecar = (file: string) => {
    let found = sidecarCache.get(file);
    if (!found) {
      found = (async () => {
        const relative = portablePath(path.relative(root, file));
        try {
          const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
          if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
            return parsed as Record<string, unknown>;
          fail(relative, 'sidecar', 'not a JSON object');
        } catch (error) {
          fail(relative, 'sidecar', `not readable JSON: ${(error as Error).message}`);
        }
        return undefined;
      })();
      sidecarCache.set(file, found);
    }
    return found;
  };

  const images: { file: string; name: BidsName; levels: string[]; subject: string }[] = [];
  for (const subject of await sortedEntries(root)) {
    if (!subject.isDirectory() || !/^sub-[a-zA-Z0-9]+$/.test(subject.name)) continue;
    const subjectDir = path.join(root, subject.name);
    const sessions = (await sortedEntries(subjectDir)).filter(
      (e) => e.isDirectory() && /^ses-[a-zA-Z0-9]+$/.test(e.name),
    );
    const sessionDirs =
      sessions.length > 0 ? sessions.map((s) => path.join(subjectDir, s.name)) : [subjectDir];
    for (const sessionDir of sessionDirs) {
      for (const datatype of await sortedEntries(sessionDir)) {
        if (!datatype.isDirectory() || /^ses-/.test(datatype.name)) continue;
        const datatypeDir = path.join(sessionDir, datatype.name);
        for (const entry of await sortedEntries(datatypeDir)) {
          if (!entry.isFile() || !NIFTI.test(entry.name)) continue;
          const name = parseBidsName(entry.name);
          const relative = portablePath(path.relative(root, path.join(datatypeDir, entry.name)));
          if (!name || name.entities.get('sub') !== subject.name.slice(4)) {
            fail(
              relative,
              'file',
              `not a BIDS name of ${subject.name} (sub-<label>[_<key>-<value>…]_<suffix>.nii[.gz])`,
            );
            continue;
          }
          const levels = [root, subjectDir, ...(sessionDir === subjectDir ? [] : [sessionDir]), datatypeDir];
          images.push({ file: path.join(datatypeDir, entry.name), name, levels, subject: subject.name });
        }
      }
    }
  }

  const jsonByDir = new Map<string, Promise<{ file: string; name: BidsName }[]>>();
  const jsonIn = (dir: string) => {
    let found = jsonByDir.get(dir);
    if (!found) jsonByDir.set(dir, (found = jsonFilesIn(dir)));
    return found;
  };
  const scans: PlannedScan[] = [];
  for (const image of images) {
    const relativePath = portablePath(path.relative(root, image.file));
    let sidecar: Record<string, unknown> | undefined;
    for (const level of image.levels) {
      const applying = (await jsonIn(level))
        .filter((json) => sidecarApplies(json.name, image.name))
        .sort((a, b) => a.name.entities.size - b.name.entities.size);
      for (const json of applying) {
        const content = await readSidecar(json.file);
        if (content) sidecar = { ...sidecar, ...content };
      }
    }
    if (sidecar && Buffer.byteLength(JSON.stringify(sidecar)) > MAX_SIDECAR_BYTES) {
      fail(
        relativePath,
        'sidecar',
        `its JSON sidecar is larger than ${MAX_SIDECAR_BYTES / 1024} KiB (the server's limit)`,
      );
      continue;
    }
    const species = participants.get(image.subject) ?? defaults.species;
    const placement = await resolvePlacement(
      catalogue,
      { atlas: defaults.atlas, category: defaults.category, species },
      {
        atlas: '--atlas',
        category: '--category',
        species: participants.has(image.subject) ? 'participants.tsv species' : '--species',
      },
    );
    if (!('ok' in placement)) {
      fail(relativePath, placement.column, placement.message);
      continue;
    }
    const info = await stat(image.file);
    scans.push({
      file: image.file,
      relativePath,
      size: info.size,
      mtimeMs: info.mtimeMs,
      fields: {
        name: image.name.stem,
        atlas: placement.ok.atlas === undefined ? undefined : String(placement.ok.atlas),
        category: placement.ok.category === undefined ? undefined : String(placement.ok.category),
        description: defaults.description,
        ...visibilityFields(defaults.visibility, defaults.embargoUntil),
      },
      sidecar,
    });
  }
  return { kind: 'bids', root, identity, scans, issues };
}
