import { ValidationError } from '#shared/errors/httpErrors';
import { httpUrlField } from '#shared/http/httpUrlField';
import { normaliseHexColour } from '#shared/domain/naming/naming';

/** A brain's writable fields as a request sends them (multipart text, url-encoded or JSON). */
export interface BrainBody {
  name?: string;
  description?: string;
  atlas?: number | null;
  category?: number;
  is_reference?: boolean;
  extra_link?: string;
  website?: string;
  color?: string;
  verified?: boolean;
}

export const brainFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 5000 },
  atlas: { type: 'integer', description: 'Atlas id; species and category are derived from it.' },
  category: {
    type: 'integer',
    description: "Category id; required without an atlas, and must match the atlas's category.",
  },
  is_reference: { type: 'boolean' },
  extra_link: httpUrlField,
  website: httpUrlField,
  color: { type: 'string', maxLength: 7, description: '#rrggbb or #rgb (stored lowercase #rrggbb).' },
  verified: { type: 'boolean', description: 'Staff only (403 otherwise).' },
} as const;

/** The JSON form of an update: atlas null files the brain under its category alone. */
export const brainJsonFields = { ...brainFields, atlas: { type: ['integer', 'null'] } } as const;

/** `#rgb`/`#rrggbb` → `#rrggbb`; "" stays "" (no colour); undefined when not sent. */
export function colourOf(color: string | undefined): string | undefined {
  if (color === undefined) return undefined;
  if (color.trim() === '') return '';
  const hex = normaliseHexColour(color);
  if (!hex) throw ValidationError.field('color', 'Enter a hex colour: #rrggbb or #rgb.');
  return hex;
}
