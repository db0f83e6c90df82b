/** What the catalogue keeps of an OME-XML ImageDescription: the first image's Pixels element. */
export interface OmeInfo {
  readonly images: number;
  readonly dimension_order: string | null;
  readonly size: { x: number | null; y: number | null; z: number | null; c: number | null; t: number | null };
  readonly pixel_type: string | null;
  readonly physical_size: {
    x: number | null;
    y: number | null;
    z: number | null;
    x_unit: string | null;
    y_unit: string | null;
    z_unit: string | null;
  };
}

export function isOmeXml(description: string): boolean {
  return /<(\w+:)?OME[\s>]/.test(description);
}

/**
 * Reads the attributes of the first <Pixels> element (prefixed or not). OME's default unit for
 * physical sizes is the micrometre ("µm") when PhysicalSize*Unit is absent but the size is given.
 */
export function parseOmeXml(xml: string): OmeInfo {
  const images = (xml.match(/<(\w+:)?Image[\s>]/g) ?? []).length;
  const pixels = /<(?:\w+:)?Pixels\s([^>]*)>/.exec(xml)?.[1] ?? '';
  const attributes = new Map<string, string>();
  for (const match of pixels.matchAll(/([\w:]+)\s*=\s*"([^"]*)"/g)) {
    attributes.set(match[1] ?? '', decodeEntities(match[2] ?? ''));
  }
  const number = (name: string): number | null => {
    const value = attributes.get(name);
    const parsed = value === undefined ? NaN : Number(value);
    return Number.isFinite(parsed) ? parsed : null;
  };
  const unit = (axis: string): string | null =>
    attributes.get(`PhysicalSize${axis}Unit`) ?? (attributes.has(`PhysicalSize${axis}`) ? 'µm' : null);
  return {
    images,
    dimension_order: attributes.get('DimensionOrder') ?? null,
    size: {
      x: number('SizeX'),
      y: number('SizeY'),
      z: number('SizeZ'),
      c: number('SizeC'),
      t: number('SizeT'),
    },
    pixel_type: attributes.get('Type') ?? null,
    physical_size: {
      x: number('PhysicalSizeX'),
      y: number('PhysicalSizeY'),
      z: number('PhysicalSizeZ'),
      x_unit: unit('X'),
      y_unit: unit('Y'),
      z_unit: unit('Z'),
    },
  };
}

function decodeEntities(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}
