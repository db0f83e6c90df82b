/** OME-NGFF multiscales, as the catalogue shows them: axes, and each level's path and scale. */
export interface Multiscale {
  readonly name: string | null;
  readonly version: string | null;
  readonly axes: unknown[];
  readonly datasets: Array<{ path: string; scale: number[] | null; translation: number[] | null }>;
}

type Json = Record<string, unknown>;

/** v2 (NGFF ≤ 0.4): attributes.multiscales; v3 (NGFF 0.5): attributes.ome.multiscales. */
export function multiscalesOf(attributes: Json | undefined): Multiscale[] {
  if (!attributes) return [];
  const ome = attributes.ome as Json | undefined;
  const list = ome?.multiscales ?? attributes.multiscales;
  if (!Array.isArray(list)) return [];
  const version = typeof ome?.version === 'string' ? ome.version : null;
  return list.filter(isObject).map((entry) => ({
    name: typeof entry.name === 'string' ? entry.name : null,
    version: typeof entry.version === 'string' ? entry.version : version,
    axes: Array.isArray(entry.axes) ? entry.axes : [],
    datasets: (Array.isArray(entry.datasets) ? entry.datasets : []).filter(isObject).map((dataset) => ({
      path: typeof dataset.path === 'string' ? dataset.path : '',
      scale: transform(dataset, 'scale'),
      translation: transform(dataset, 'translation'),
    })),
  }));
}

function transform(dataset: Json, type: 'scale' | 'translation'): number[] | null {
  const transforms = Array.isArray(dataset.coordinateTransformations)
    ? dataset.coordinateTransformations
    : [];
  const found = transforms.filter(isObject).find((item) => item.type === type);
  const values = found?.[type];
  return Array.isArray(values) && values.every((value) => typeof value === 'number') ? values : null;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
