/**
 * Naming rules of the catalogue (interface-spec 2.4–2.7, decisions.md "Catalogue"). Pure functions:
 * the same rules serve the deciders, the uniqueness reservations and the path lookups.
 */

const WHITESPACE = /\s+/g;

/** Category and species names: trimmed, inner whitespace collapsed, lowercase. */
export function normaliseName(name: string): string {
  return name.trim().replace(WHITESPACE, ' ').toLowerCase();
}

/** "mus MUSCULUS" → "Mus musculus": first word capitalised, the others lowercase. */
export function formatScientificName(name: string): string {
  const words = name.trim().split(WHITESPACE).filter(Boolean);
  return words
    .map((word, i) => {
      const lower = word.toLowerCase();
      return i === 0 ? lower.charAt(0).toUpperCase() + lower.slice(1) : lower;
    })
    .join(' ');
}

/**
 * A scientific name as written in a path ("mus%20musculus", "Mus+musculus", "mus_musculus",
 * "mus-musculus") → the key it is looked up by (the lowercase name with single spaces).
 */
export function scientificNameKey(segment: string): string {
  return segment
    .trim()
    .replace(/[\s+_-]+/g, ' ')
    .trim()
    .toLowerCase();
}

export const MAX_SLUG_LENGTH = 64;

/** Lowercase, URL-safe: letters and digits joined by single hyphens, diacritics dropped. */
export function slugify(text: string, maxLength = MAX_SLUG_LENGTH): string {
  const ascii = text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  const slug = ascii
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slug.slice(0, maxLength).replace(/-+$/, '');
}

/**
 * Candidate atlas slugs in order of preference: the name, then name and version, then numbered.
 * The command side reserves the first one that is free.
 */
export function atlasSlugCandidates(name: string, version: string, attempt: number): string {
  const base = slugify(name) || 'atlas';
  if (attempt === 0) return base;
  const withVersion = version.trim() === '' ? base : slugify(`${name} ${version}`) || base;
  if (attempt === 1 && withVersion !== base) return withVersion;
  const suffix = `-${attempt + 1}`;
  return `${withVersion.slice(0, MAX_SLUG_LENGTH - suffix.length).replace(/-+$/, '')}${suffix}`;
}

/**
 * A brain's readable_id: its name as a slug, then its id ("allen-p56-reference-42"). The id makes it
 * unique by construction (it follows the last hyphen, and ids are unique), and the slug part makes it
 * never purely numeric, so /api/brains/{key}/ can tell it from an id.
 */
export function readableIdFor(name: string, brainId: number): string {
  const suffix = `-${brainId}`;
  const base = slugify(name, MAX_SLUG_LENGTH - suffix.length) || 'brain';
  return `${/^[0-9-]+$/.test(base) ? `brain-${base}`.slice(0, MAX_SLUG_LENGTH - suffix.length) : base}${suffix}`;
}

/** `/api/brains/{key}/`: a purely numeric key is an id, anything else a readable_id. */
export const isNumericKey = (key: string): boolean => /^[0-9]+$/.test(key);

/** `#RGB` or `#RRGGBB` → lowercase `#rrggbb`; undefined when it is not a colour. */
export function normaliseHexColour(colour: string): string | undefined {
  const match = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.exec(colour.trim());
  if (!match) return undefined;
  const hex = match[1]!.toLowerCase();
  return `#${hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex}`;
}
