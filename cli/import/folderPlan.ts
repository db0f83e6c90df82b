import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { type Catalogue, resolvePlacement } from './catalogue';
import {
  type ImportDefaults,
  type ImportPlan,
  type PlanIssue,
  type PlannedScan,
  visibilityFields,
} from './importPlan';
import { nameFromFile, portablePath, scanExtension } from './scanFormats';

/** Directories never searched for scans: hidden ones and those of tools. */
const SKIPPED_DIRS = new Set(['node_modules', '__pycache__']);

/** Every file below `root` (sorted, hidden entries skipped), recursing unless told not to. */
export async function filesBelow(
  root: string,
  recursive: boolean,
): Promise<{ files: string[]; zarrDirs: string[] }> {
  const files: string[] = [];
  const zarrDirs: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries: Dirent[] = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name.toLowerCase().endsWith('.zarr')) zarrDirs.push(full);
        else if (recursive && !SKIPPED_DIRS.has(entry.name)) await walk(full);
      } else if (entry.isFile()) files.push(full);
    }
  };
  await walk(root);
  return { files, zarrDirs };
}

/** A folder of scans: one brain per supported file, named after it, all placed alike. */
export async function folderPlan(
  root: string,
  options: ImportDefaults & { recursive: boolean },
  catalogue: Catalogue,
): Promise<ImportPlan> {
  const { files, zarrDirs } = await filesBelow(root, options.recursive);
  const issues: PlanIssue[] = zarrDirs.map((dir) => ({
    row: 0,
    file: portablePath(path.relative(root, dir)),
    column: 'file',
    message: 'a Zarr store is imported as a .zarr zip archive, not a directory',
  }));
  const placement = await resolvePlacement(catalogue, options, {
    atlas: '--atlas',
    category: '--category',
    species: '--species',
  });
  if (!('ok' in placement)) issues.push({ row: 0, column: placement.column, message: placement.message });
  const scans: PlannedScan[] = [];
  for (const file of files.filter((f) => scanExtension(f) !== undefined)) {
    const relativePath = portablePath(path.relative(root, file));
    const name = nameFromFile(file);
    const info = await stat(file);
    scans.push({
      file,
      relativePath,
      size: info.size,
      mtimeMs: info.mtimeMs,
      fields: {
        name,
        atlas: 'ok' in placement && placement.ok.atlas !== undefined ? String(placement.ok.atlas) : undefined,
        category:
          'ok' in placement && placement.ok.category !== undefined
            ? String(placement.ok.category)
            : undefined,
        description: options.description,
        ...visibilityFields(options.visibility, options.embargoUntil),
      },
    });
  }
  return { kind: 'folder', root, identity: `folder:${path.basename(root)}`, scans, issues };
}
