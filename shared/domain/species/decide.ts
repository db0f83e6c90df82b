import { ConflictError, ForbiddenError, InvalidFieldError } from '#shared/domain/domainErrors';
import type { Actor } from '#shared/domain/actor';
import type { SpeciesEvent, SpeciesState } from './events';

export type CreateSpecies = {
  readonly type: 'CreateSpecies';
  readonly data: {
    readonly speciesId: number;
    readonly name: string;
    readonly scientificName: string;
    readonly description: string;
    /** The category the caller named, resolved from its stream; undefined when it does not exist. */
    readonly categoryId: number | undefined;
    readonly actor: Actor;
    readonly now: string;
  };
};

export type SpeciesCommand = CreateSpecies;

function createSpecies({ data }: CreateSpecies, state: SpeciesState): SpeciesEvent[] {
  if (!data.actor.isStaff) throw new ForbiddenError('Only staff may create species.');
  if (state.status !== 'none') throw new ConflictError(`Species ${data.speciesId} already exists.`);
  const errors: Record<string, string[]> = {};
  if (data.name === '') errors.name = ['This field may not be blank.'];
  if (data.scientificName === '') errors.scientific_name = ['This field may not be blank.'];
  if (data.categoryId === undefined) errors.category = ['No category with this id or name.'];
  if (Object.keys(errors).length > 0 || data.categoryId === undefined) throw new InvalidFieldError(errors);
  return [
    {
      type: 'SpeciesCreated',
      data: {
        speciesId: data.speciesId,
        name: data.name,
        scientificName: data.scientificName,
        description: data.description,
        categoryId: data.categoryId,
        createdBy: data.actor.userId,
        createdAt: data.now,
      },
    },
  ];
}

export function decideSpecies(command: SpeciesCommand, state: SpeciesState): SpeciesEvent[] {
  switch (command.type) {
    case 'CreateSpecies':
      return createSpecies(command, state);
    default: {
      const unknown: never = command.type;
      throw new Error(`unknown species command ${String(unknown)}`);
    }
  }
}
