import type { EventStore } from '#shared/eventStore/eventStore';
import { loadAggregate } from '#shared/commandHandling/handleCommand';
import { findReservationOwner } from '#shared/commandHandling/reserveValue';
import { CATEGORY_NAME_SCOPE, categoryDecider, categoryStreamName } from '#shared/domain/categories/events';
import { normaliseName } from '#shared/domain/naming/naming';
import { databaseIdOf } from '#shared/http/ids';

export interface CategoryRef {
  readonly id: number;
  readonly name: string;
}

async function existingCategory(store: EventStore, stream: string): Promise<CategoryRef | undefined> {
  const { state } = await loadAggregate(store, stream, categoryDecider);
  return state.status === 'created' ? { id: state.categoryId, name: state.name } : undefined;
}

/**
 * A category named by id (a number, or decimal digits) or by name (case-insensitively), from the
 * event store: the name's reservation says which stream owns it. Undefined when there is none.
 */
export async function resolveCategory(
  store: EventStore,
  ref: number | string,
): Promise<CategoryRef | undefined> {
  const text = String(ref).trim();
  if (/^\d+$/.test(text)) {
    const id = databaseIdOf(text);
    const byId = id === undefined ? undefined : await existingCategory(store, categoryStreamName(id));
    if (byId || typeof ref === 'number') return byId;
  }
  const owner = await findReservationOwner(store, CATEGORY_NAME_SCOPE, normaliseName(text));
  return owner ? existingCategory(store, owner) : undefined;
}
