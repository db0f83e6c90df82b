import { ConflictError, ForbiddenError, InvalidFieldError } from '#shared/domain/domainErrors';
import type { Actor } from '#shared/domain/actor';
import type { CategoryEvent, CategoryState } from './events';

export type CreateCategory = {
  readonly type: 'CreateCategory';
  readonly data: {
    readonly categoryId: number;
    readonly name: string;
    readonly description: string;
    readonly imageKey: string | null;
    readonly imageUrl: string | null;
    readonly actor: Actor;
    readonly now: string;
  };
};

export type CategoryCommand = CreateCategory;

export const IMAGE_XOR_URL = 'Provide either an uploaded image or an image_url, not both.';

function createCategory({ data }: CreateCategory, state: CategoryState): CategoryEvent[] {
  if (!data.actor.isStaff) throw new ForbiddenError('Only staff may create categories.');
  if (state.status !== 'none') throw new ConflictError(`Category ${data.categoryId} already exists.`);
  if (data.name === '') throw InvalidFieldError.field('name', 'This field may not be blank.');
  if (data.imageKey !== null && data.imageUrl !== null)
    throw InvalidFieldError.field('non_field_errors', IMAGE_XOR_URL);
  return [
    {
      type: 'CategoryCreated',
      data: {
        categoryId: data.categoryId,
        name: data.name,
        description: data.description,
        imageKey: data.imageKey,
        imageUrl: data.imageUrl,
        createdBy: data.actor.userId,
        createdAt: data.now,
      },
    },
  ];
}

export function decideCategory(command: CategoryCommand, state: CategoryState): CategoryEvent[] {
  switch (command.type) {
    case 'CreateCategory':
      return createCategory(command, state);
    default: {
      const unknown: never = command.type;
      throw new Error(`unknown category command ${String(unknown)}`);
    }
  }
}
