/** What a person reads: dates, sizes and the extracted metadata in words. */

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

const numbers = (value: unknown): number[] | undefined =>
  Array.isArray(value) && value.every((n) => typeof n === 'number') ? value : undefined;

const round = (n: number) => String(Math.round(n * 1000) / 1000);

/** The metadata rows of a brain page (label, value); unknown keys follow as plain text. */
export function metadataRows(metadata: Record<string, unknown>): [string, string][] {
  const rows: [string, string][] = [];
  const units = (metadata.units ?? {}) as { spatial?: string };
  const format = metadata.format;
  if (typeof format === 'string')
    rows.push([
      'Format',
      format === 'nifti'
        ? `NIfTI-${typeof metadata.nifti_version === 'number' ? metadata.nifti_version : 1}`
        : format.toUpperCase(),
    ]);
  const shape = numbers(metadata.shape);
  if (shape) rows.push(['Shape', shape.join(' × ')]);
  const voxels = numbers(metadata.voxel_sizes);
  if (voxels) {
    const unit = units.spatial && units.spatial !== 'unknown' ? ` ${units.spatial}` : '';
    rows.push([
      'Voxel size',
      voxels
        .slice(0, 3)
        .map((v) => `${round(v)}${unit}`)
        .join(' × '),
    ]);
  }
  if (typeof metadata.datatype === 'string') rows.push(['Data type', metadata.datatype]);
  if (typeof metadata.dtype === 'string') rows.push(['Data type', metadata.dtype]);
  const affine = metadata.affine;
  if (Array.isArray(affine) && affine.length >= 3)
    rows.push(['Orientation', orientation(affine as number[][])]);
  if (typeof metadata.qform_name === 'string')
    rows.push(['qform', `${metadata.qform_name} (${String(metadata.qform_code)})`]);
  if (typeof metadata.sform_name === 'string')
    rows.push(['sform', `${metadata.sform_name} (${String(metadata.sform_code)})`]);
  for (const key of [
    'width',
    'height',
    'page_count',
    'bits_per_sample',
    'samples_per_pixel',
    'compression',
    'zarr_format',
  ]) {
    const value = metadata[key];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      rows.push([label(key), String(value)]);
  }
  const chunks = numbers(metadata.chunks);
  if (chunks) rows.push(['Chunks', chunks.join(' × ')]);
  if (typeof metadata.error === 'string') rows.push(['Error', metadata.error]);
  return rows;
}

const label = (key: string) => key.charAt(0).toUpperCase() + key.slice(1).replaceAll('_', ' ');

/** Axis codes of an affine (RAS+ world): the direction each voxel axis mostly points to, e.g. "LAS". */
export function orientation(affine: number[][]): string {
  const codes = [
    ['L', 'R'],
    ['P', 'A'],
    ['I', 'S'],
  ];
  let text = '';
  for (let axis = 0; axis < 3; axis++) {
    let best = 0;
    let bestValue = 0;
    for (let world = 0; world < 3; world++) {
      const value = affine[world]?.[axis] ?? 0;
      if (Math.abs(value) > Math.abs(bestValue)) {
        best = world;
        bestValue = value;
      }
    }
    text += codes[best]![bestValue >= 0 ? 1 : 0];
  }
  return `${text}+`;
}
