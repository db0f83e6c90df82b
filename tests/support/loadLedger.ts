/**
 * What the load clients were told. Only acknowledged (2xx) writes are promises the service must
 * keep; a write whose answer was lost to a crash may or may not have happened.
 */
export interface RegisteredAccount {
  readonly userId: number;
  readonly email: string;
  readonly password: string;
}

export interface LoadLedger {
  readonly registered: RegisteredAccount[];
  /** Personal access tokens answered with 201: id → owner. */
  readonly issuedTokens: Map<string, number>;
  /** Tokens answered with 204 on DELETE. */
  readonly revokedTokens: Set<string>;
  /**
   * Per user, the bios the read model may hold: the last acknowledged one, plus every later attempt
   * whose answer was lost (it may have been applied).
   */
  readonly possibleBios: Map<number, string[]>;
  /** Atlases answered with 201: slug → species id. */
  readonly createdAtlases: Map<string, number>;
  /** Brains answered with 201: id → readable_id. */
  readonly createdBrains: Map<number, string>;
  /** Brains whose DELETE was answered with 204. */
  readonly deletedBrains: Set<number>;
  /** Brains whose DELETE went unanswered: they may or may not exist. */
  readonly maybeDeletedBrains: Set<number>;
  /** Answers no client should get from a healthy service ("POST /api/tokens/ → 500 {...}"). */
  readonly unexpected: string[];
  /** How many answers of each status the clients got ('unreachable': none at all). */
  readonly statuses: Map<number | 'unreachable', number>;
  acknowledged: number;
  unreachable: number;
}

export function createLoadLedger(): LoadLedger {
  return {
    registered: [],
    issuedTokens: new Map(),
    revokedTokens: new Set(),
    possibleBios: new Map(),
    createdAtlases: new Map(),
    createdBrains: new Map(),
    deletedBrains: new Set(),
    maybeDeletedBrains: new Set(),
    unexpected: [],
    statuses: new Map(),
    acknowledged: 0,
    unreachable: 0,
  };
}
