/** Events of the `user-<id>` stream: the account, its profile, and every access token it holds. */
export type TokenKind = 'login' | 'personal';

export type UserRegistered = {
  readonly type: 'UserRegistered';
  readonly data: {
    readonly userId: number;
    readonly email: string;
    readonly username: string;
    readonly firstName: string;
    readonly lastName: string;
    readonly passwordHash: string;
    readonly isStaff: boolean;
    readonly registeredAt: string;
  };
};

export type UserProfileUpdated = {
  readonly type: 'UserProfileUpdated';
  readonly data: {
    readonly userId: number;
    readonly firstName?: string;
    readonly lastName?: string;
    readonly bio?: string;
    readonly location?: string;
    /** BlobStore key of the new avatar; null removes it. */
    readonly avatarKey?: string | null;
    readonly updatedAt: string;
  };
};

export type UserPasswordChanged = {
  readonly type: 'UserPasswordChanged';
  readonly data: { readonly userId: number; readonly passwordHash: string; readonly changedAt: string };
};

export type UserStaffStatusChanged = {
  readonly type: 'UserStaffStatusChanged';
  readonly data: { readonly userId: number; readonly isStaff: boolean; readonly changedAt: string };
};

export type AccessTokenIssued = {
  readonly type: 'AccessTokenIssued';
  readonly data: {
    readonly userId: number;
    readonly tokenId: string;
    readonly kind: TokenKind;
    readonly name: string;
    /** Hex SHA-256 of the secret; the secret itself is never stored. */
    readonly tokenHash: string;
    readonly createdAt: string;
    readonly expiresAt: string | null;
  };
};

export type AccessTokenRevoked = {
  readonly type: 'AccessTokenRevoked';
  readonly data: {
    readonly userId: number;
    readonly tokenId: string;
    readonly reason: 'logout' | 'revoked' | 'password_changed';
    readonly revokedAt: string;
  };
};

export type UserEvent =
  | UserRegistered
  | UserProfileUpdated
  | UserPasswordChanged
  | UserStaffStatusChanged
  | AccessTokenIssued
  | AccessTokenRevoked;

export interface TokenState {
  readonly kind: TokenKind;
  readonly expiresAt: string | null;
  readonly revoked: boolean;
}

export type UserState =
  | { readonly status: 'unregistered' }
  | {
      readonly status: 'registered';
      readonly userId: number;
      readonly email: string;
      readonly username: string;
      readonly firstName: string;
      readonly lastName: string;
      readonly bio: string;
      readonly location: string;
      readonly avatarKey: string | null;
      readonly passwordHash: string;
      readonly isStaff: boolean;
      readonly registeredAt: string;
      readonly tokens: ReadonlyMap<string, TokenState>;
    };

export type RegisteredUser = Extract<UserState, { status: 'registered' }>;

export const initialUserState = (): UserState => ({ status: 'unregistered' });

export const userStreamName = (userId: number): string => `user-${userId}`;

export function evolveUser(state: UserState, event: UserEvent): UserState {
  if (event.type === 'UserRegistered') {
    const d = event.data;
    return {
      status: 'registered',
      userId: d.userId,
      email: d.email,
      username: d.username,
      firstName: d.firstName,
      lastName: d.lastName,
      bio: '',
      location: '',
      avatarKey: null,
      passwordHash: d.passwordHash,
      isStaff: d.isStaff,
      registeredAt: d.registeredAt,
      tokens: new Map(),
    };
  }
  if (state.status !== 'registered') return state;
  switch (event.type) {
    case 'UserProfileUpdated': {
      const { firstName, lastName, bio, location, avatarKey } = event.data;
      return {
        ...state,
        firstName: firstName ?? state.firstName,
        lastName: lastName ?? state.lastName,
        bio: bio ?? state.bio,
        location: location ?? state.location,
        avatarKey: avatarKey === undefined ? state.avatarKey : avatarKey,
      };
    }
    case 'UserPasswordChanged':
      return { ...state, passwordHash: event.data.passwordHash };
    case 'UserStaffStatusChanged':
      return { ...state, isStaff: event.data.isStaff };
    case 'AccessTokenIssued': {
      const tokens = new Map(state.tokens);
      tokens.set(event.data.tokenId, {
        kind: event.data.kind,
        expiresAt: event.data.expiresAt,
        revoked: false,
      });
      return { ...state, tokens };
    }
    case 'AccessTokenRevoked': {
      const current = state.tokens.get(event.data.tokenId);
      if (!current) return state;
      const tokens = new Map(state.tokens);
      tokens.set(event.data.tokenId, { ...current, revoked: true });
      return { ...state, tokens };
    }
  }
}

export const userDecider = { initialState: initialUserState, evolve: evolveUser };
