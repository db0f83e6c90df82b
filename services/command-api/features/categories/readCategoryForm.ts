import { randomUUID } from 'node:crypto';
import type { RequestContext } from '#shared/http/routeSpec';
import { ValidationError } from '#shared/errors/httpErrors';
import { compileFormValidator } from '#shared/http/schemaValidator';
import { httpUrlField } from '#shared/http/httpUrlField';
import { cleanupStoredFiles, parseMultipart } from '#shared/multipart/parseMultipart';
import { checkImage } from '#shared/media/checkImage';
import type { ImageFormat } from '#shared/media/sniffImage';
import type { CommandDeps } from '#services/command-api/commandDeps';

export interface CategoryFields {
  name: string;
  description?: string;
  image_url?: string | null;
}

export const categoryFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  description: { type: 'string', maxLength: 5000 },
  image_url: { ...httpUrlField, type: ['string', 'null'] },
} as const;

export const categoryFormSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    ...categoryFields,
    image: {
      type: 'string',
      format: 'binary',
      description: 'PNG, JPEG, GIF, WebP or BMP; checked by content.',
    },
  },
};

const validateFormFields = compileFormValidator({
  type: 'object',
  required: ['name'],
  properties: categoryFields,
});

const IMAGE_FORMATS: ReadonlySet<ImageFormat> = new Set(['png', 'jpeg', 'gif', 'webp', 'bmp']);
const EXTENSION = /\.(png|jpe?g|gif|webp|bmp)$/i;

/**
 * Streams a multipart category: the image goes straight to the BlobStore and is checked by
 * content; on any invalid field the stored image is deleted again.
 */
export async function readCategoryForm(
  ctx: RequestContext<unknown>,
  deps: CommandDeps,
): Promise<{ fields: CategoryFields; imageKey: string | undefined }> {
  const parsed = await parseMultipart(ctx.req, {
    blobStore: deps.blobs,
    files: {
      image: {
        keyFor: ({ filename }) =>
          `categories/${randomUUID()}${EXTENSION.exec(filename)?.[0]?.toLowerCase() ?? ''}`,
        maxBytes: deps.maxAvatarBytes,
      },
    },
  });
  const image = parsed.files.image;
  const fieldErrors = validateFormFields(parsed.fields);
  const check = image
    ? checkImage(image.head, { formats: IMAGE_FORMATS, maxPixels: deps.maxImagePixels })
    : undefined;
  if (fieldErrors || (check && !check.ok)) {
    await cleanupStoredFiles(deps.blobs, parsed.files);
    throw new ValidationError({ ...fieldErrors, ...(check && !check.ok ? { image: [check.message] } : {}) });
  }
  return { fields: parsed.fields as unknown as CategoryFields, imageKey: image?.key };
}
