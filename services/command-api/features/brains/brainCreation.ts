import { randomUUID } from 'node:crypto';
import { type CreateBrain, decideBrain } from '#shared/domain/brains/decide';
import { type BrainCreated, brainDecider, createdVisibility } from '#shared/domain/brains/events';
import type { Actor } from '#shared/domain/actor';
import { readableIdFor } from '#shared/domain/naming/naming';
import { brainShapeB } from '#shared/views/brainViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { type BrainBody, colourOf, embargoUntilOf } from './brainFields';
import { resolveAtlas, resolveCategory } from './resolvePlacement';

/** The CreateBrain of a create's fields, once the brain's id and its file's upload are known. */
export type CreateBrainFor = (brainId: number, fileUploadId: string | null) => CreateBrain;

/**
 * Resolves a create's atlas and category and checks what the decider refuses (403, unknown or
 * contradicting references) before an id or a record is taken.
 */
export async function brainCreation(
  deps: CommandDeps,
  fields: BrainBody,
  actor: Actor,
  now: string,
): Promise<CreateBrainFor> {
  const embargoUntil = embargoUntilOf(fields.embargo_until);
  const [atlas, category] = await Promise.all([
    resolveAtlas(deps.store, fields.atlas ?? undefined),
    resolveCategory(deps.store, fields.category),
  ]);
  const command: CreateBrainFor = (brainId, fileUploadId) => ({
    type: 'CreateBrain',
    data: {
      brainId,
      readableId: readableIdFor(fields.name ?? '', brainId),
      uuid: randomUUID(),
      name: fields.name ?? '',
      description: fields.description ?? '',
      atlas,
      category,
      isReference: fields.is_reference ?? false,
      extraLink: fields.extra_link ?? '',
      website: fields.website ?? '',
      color: colourOf(fields.color) ?? '',
      verified: fields.verified ?? false,
      visibility: fields.visibility,
      embargoUntil,
      fileUploadId,
      actor,
      now,
    },
  });
  decideBrain(command(1, null), brainDecider.initialState());
  return command;
}

/** The 201 of a create, in shape B, from its BrainCreated and its file's name. */
export function createdBrainBody(event: BrainCreated, fileName: string, baseUrl: string) {
  const d = event.data;
  return brainShapeB(
    {
      id: d.brainId,
      readable_id: d.readableId,
      uuid: d.uuid,
      name: d.name,
      date_uploaded: d.createdAt,
      website: d.website,
      verified: d.verified,
      category_id: d.categoryId,
      uploader_id: d.uploaderId,
      atlas_id: d.atlasId,
      is_reference: d.isReference,
      extra_link: d.extraLink,
      visibility: createdVisibility(d).visibility,
      embargo_until: createdVisibility(d).embargoUntil,
      file_name: fileName,
    },
    baseUrl,
  );
}
