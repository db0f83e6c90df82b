/** Events of the `category-<id>` stream. */
export type CategoryCreated = {
  readonly type: 'CategoryCreated';
  readonly data: {
    readonly categoryId: number;
    /** Lowercase (naming.normaliseName); unique, enforced by a reservation. */
    readonly name: string;
    readonly description: string;
    /** BlobStore key of an uploaded image (checked by content), or null. */
    readonly imageKey: string | null;
    readonly imageUrl: string | null;
    readonly createdBy: number;
    readonly createdAt: string;
  };
};

export type CategoryEvent = CategoryCreated;

export type CategoryState =
  | { readonly status: 'none' }
  | { readonly status: 'created'; readonly categoryId: number; readonly name: string };

export const initialCategoryState = (): CategoryState => ({ status: 'none' });

export function evolveCategory(_state: CategoryState, event: CategoryEvent): CategoryState {
  switch (event.type) {
    case 'CategoryCreated':
      return { status: 'created', categoryId: event.data.categoryId, name: event.data.name };
  }
}

export const categoryDecider = { initialState: initialCategoryState, evolve: evolveCategory };
export const categoryStreamName = (categoryId: number): string => `category-${categoryId}`;
/** Reservation scope that keeps category names unique (case-insensitively). */
export const CATEGORY_NAME_SCOPE = 'category_name';
