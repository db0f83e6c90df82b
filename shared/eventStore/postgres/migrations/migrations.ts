import type { Migration } from './migration';
import { m0001CreateEventStore } from './m0001CreateEventStore';
import { m0002ForbidEventChanges } from './m0002ForbidEventChanges';
import { m0003CreateAppendFunction } from './m0003CreateAppendFunction';
import { m0004GuardOrderInLongerTransactions } from './m0004GuardOrderInLongerTransactions';
import { m0005AppendAsOwner } from './m0005AppendAsOwner';
import { m0006NotifyAfterCommit } from './m0006NotifyAfterCommit';
import { m0007AppendToStreams } from './m0007AppendToStreams';
import { m0008GenericAppendPlans } from './m0008GenericAppendPlans';

/** In version order. Append new migrations; never edit one that has shipped. */
export const migrations: readonly Migration[] = [
  m0001CreateEventStore,
  m0002ForbidEventChanges,
  m0003CreateAppendFunction,
  m0004GuardOrderInLongerTransactions,
  // After every redefinition of the append function: CREATE OR REPLACE resets SECURITY DEFINER.
  m0005AppendAsOwner,
  // Redefines the function and sets SECURITY DEFINER again itself.
  m0006NotifyAfterCommit,
  // Sets SECURITY DEFINER on its function itself.
  m0007AppendToStreams,
  // Keeps the functions' SECURITY DEFINER and search_path (ALTER FUNCTION ... SET adds a setting).
  m0008GenericAppendPlans,
];
