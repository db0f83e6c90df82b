import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from './nullable';

/** A row of the `categories` read model, as categoryJson reads it. */
export interface CategoryRow {
  readonly id: number;
  readonly name: string;
  readonly description: string;
  /** BlobStore key of the uploaded image ("categories/<uuid>.png"), or null. */
  readonly image_key: string | null;
  readonly image_url: string | null;
  readonly brains_count: number;
  readonly atlases_count: number;
}

/** Where an uploaded category image is served (query-api, features/categories/categoryImageRoute). */
export function categoryImageUrl(baseUrl: string, key: string | null): string | null {
  return key ? `${baseUrl}/media/${key}/` : null;
}

export function categoryJson(c: CategoryRow, baseUrl: string): CategoryJson {
  const image = categoryImageUrl(baseUrl, c.image_key);
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    image,
    image_url: c.image_url,
    image_source: image ?? c.image_url,
    brains_count: c.brains_count,
    atlases_count: c.atlases_count,
  };
}

/** The columns categoryJson needs, for SELECTs over the `categories` read model. */
export const CATEGORY_COLUMNS = 'id, name, description, image_key, image_url, brains_count, atlases_count';

/** JSON representation of a category (interface-spec 2.4, decisions.md "Catalogue"). */
export const categorySchema = Type.Object({
  id: Type.Integer(),
  name: Type.String({ description: 'Lowercase; unique.' }),
  description: Type.String(),
  image: Nullable(Type.String({ format: 'uri', description: 'Download URL of the uploaded image.' })),
  image_url: Nullable(Type.String({ format: 'uri', description: 'External image address.' })),
  image_source: Nullable(Type.String({ format: 'uri', description: 'image, else image_url, else null.' })),
  brains_count: Type.Integer(),
  atlases_count: Type.Integer(),
});
export type CategoryJson = Static<typeof categorySchema>;
