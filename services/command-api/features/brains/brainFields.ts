import { type Static, Type } from '@sinclair/typebox';
import { ValidationError } from '#shared/errors/httpErrors';
import { httpUrlField } from '#shared/http/httpUrlField';
import { Nullable } from '#shared/views/nullable';
import { normaliseHexColour } from '#shared/domain/naming/naming';
import { VISIBILITIES, type Visibility } from '#shared/domain/brains/visibility';

/** A brain's name: required by create and PUT, optional in PATCH. */
export const brainName = Type.String({ minLength: 1, maxLength: 200 });

/** A brain's writable fields as a form sends them (multipart text or url-encoded). */
export const brainFields = {
  name: Type.Optional(brainName),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  atlas: Type.Optional(Type.Integer({ description: 'Atlas id; species and category are derived from it.' })),
  category: Type.Optional(
    Type.Integer({
      description: "Category id; required without an atlas, and must match the atlas's category.",
    }),
  ),
  is_reference: Type.Optional(Type.Boolean()),
  extra_link: Type.Optional(httpUrlField),
  website: Type.Optional(httpUrlField),
  color: Type.Optional(
    Type.String({ maxLength: 7, description: '#rrggbb or #rgb (stored lowercase #rrggbb).' }),
  ),
  verified: Type.Optional(Type.Boolean({ description: 'Staff only (403 otherwise).' })),
  visibility: Type.Optional(
    Type.Unsafe<Visibility>({
      type: 'string',
      enum: [...VISIBILITIES],
      description:
        'public (the default), private (the uploader, collaborators and staff) or embargoed (until embargo_until, then public). Only the uploader or staff may change it (403). Absent in PUT or PATCH: unchanged.',
    }),
  ),
  embargo_until: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'When the embargo ends (ISO 8601, in the future); required with embargoed, ignored otherwise. Absent in PUT or PATCH: unchanged.',
    }),
  ),
};

/** The JSON form of an update: atlas null files the brain under its category alone. */
export const brainJsonFields = {
  ...brainFields,
  atlas: Type.Optional(Nullable(Type.Integer())),
  embargo_until: Type.Optional(Nullable(brainFields.embargo_until)),
};

/** A brain's writable fields as a request sends them (multipart text, url-encoded or JSON). */
export const BrainBody = Type.Object(brainJsonFields);
export type BrainBody = Static<typeof BrainBody>;

/** PUT's JSON body: every field of create but the file, so the name is required. */
export const BrainReplaceBody = Type.Object({ ...brainJsonFields, name: brainName });

/** `#rgb`/`#rrggbb` → `#rrggbb`; "" stays "" (no colour); undefined when not sent. */
export function colourOf(color: string | undefined): string | undefined {
  if (color === undefined) return undefined;
  if (color.trim() === '') return '';
  const hex = normaliseHexColour(color);
  if (!hex) throw ValidationError.field('color', 'Enter a hex colour: #rrggbb or #rgb.');
  return hex;
}

/**
 * embargo_until as the decider compares it (the ISO form the answers carry, so a round-tripped
 * value is no change); undefined when not sent. ajv has checked the format.
 */
export function embargoUntilOf(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw ValidationError.field('embargo_until', 'Enter a valid date/time (ISO 8601).');
  return new Date(at).toISOString();
}
