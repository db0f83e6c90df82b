import { randomUUID } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import type { RequestContext } from '#shared/http/routeSpec';
import { ValidationError } from '#shared/errors/httpErrors';
import { compileFormValidator } from '#shared/http/schemaValidator';
import { httpUrlField } from '#shared/http/httpUrlField';
import { Nullable } from '#shared/views/nullable';
import { cleanupStoredFiles, parseMultipart } from '#shared/multipart/parseMultipart';
import { checkImage } from '#shared/media/checkImage';
import type { ImageFormat } from '#shared/media/sniffImage';
import type { CommandDeps } from '#services/command-api/commandDeps';

export const categoryFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  image_url: Type.Optional(Nullable(httpUrlField)),
};

/** A category's fields, as a JSON body or as the fields of a form. */
export const CategoryBody = Type.Object(categoryFields);
export type CategoryFields = Static<typeof CategoryBody>;

export const categoryFormSchema = Type.Object({
  ...categoryFields,
  image: Type.Optional(
    Type.String({ format: 'binary', description: 'PNG, JPEG, GIF, WebP or BMP; checked by content.' }),
  ),
});

const validateFormFields = compileFormValidator(CategoryBody);

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
