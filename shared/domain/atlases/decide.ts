import { ConflictError, ForbiddenError, InvalidFieldError } from '#shared/domain/domainErrors';
import type { Actor } from '#shared/domain/actor';
import type { AtlasEvent, AtlasState } from './events';

export type CreateAtlas = {
  readonly type: 'CreateAtlas';
  readonly data: {
    readonly atlasId: number;
    readonly name: string;
    readonly slug: string;
    readonly description: string;
    /** The species the caller named, when it exists. */
    readonly speciesId: number | undefined;
    readonly isOfficial: boolean;
    readonly verified: boolean;
    readonly version: string;
    readonly color: string;
    readonly publicationUrl: string;
    readonly actor: Actor;
    readonly now: string;
  };
};

export type AtlasCommand = CreateAtlas;

function createAtlas({ data }: CreateAtlas, state: AtlasState): AtlasEvent[] {
  if ((data.isOfficial || data.verified) && !data.actor.isStaff)
    throw new ForbiddenError('Only staff may mark an atlas official or verified.');
  if (state.status !== 'none') throw new ConflictError(`Atlas ${data.atlasId} already exists.`);
  const errors: Record<string, string[]> = {};
  if (data.name.trim() === '') errors.name = ['This field may not be blank.'];
  if (data.speciesId === undefined) errors.species = ['No species with this id.'];
  if (Object.keys(errors).length > 0 || data.speciesId === undefined) throw new InvalidFieldError(errors);
  return [
    {
      type: 'AtlasCreated',
      data: {
        atlasId: data.atlasId,
        name: data.name.trim(),
        slug: data.slug,
        description: data.description,
        speciesId: data.speciesId,
        isOfficial: data.isOfficial,
        verified: data.verified,
        version: data.version,
        color: data.color,
        publicationUrl: data.publicationUrl,
        createdBy: data.actor.userId,
        createdAt: data.now,
      },
    },
  ];
}

export function decideAtlas(command: AtlasCommand, state: AtlasState): AtlasEvent[] {
  switch (command.type) {
    case 'CreateAtlas':
      return createAtlas(command, state);
    default: {
      const unknown: never = command.type;
      throw new Error(`unknown atlas command ${String(unknown)}`);
    }
  }
}
