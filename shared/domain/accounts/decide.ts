import { NotFoundError, ForbiddenError, InvalidFieldError } from '#shared/domain/domainErrors';
import type {
  AccessTokenIssued,
  AccessTokenRevoked,
  RegisteredUser,
  TokenKind,
  UserEvent,
  UserState,
} from './events';

/** Commands carry everything a decision needs: time, ids, hashes and the outcome of password checks. */
export type RegisterUser = {
  readonly type: 'RegisterUser';
  readonly data: {
    readonly userId: number;
    readonly email: string;
    readonly username: string;
    readonly firstName: string;
    readonly lastName: string;
    readonly passwordHash: string;
    readonly isStaff: boolean;
    readonly now: string;
  };
};

export type IssueAccessToken = {
  readonly type: 'IssueAccessToken';
  readonly data: {
    readonly tokenId: string;
    readonly kind: TokenKind;
    readonly name: string;
    readonly tokenHash: string;
    readonly expiresAt: string | null;
    /** For login tokens: whether the presented password matched the stored hash. */
    readonly passwordMatches?: boolean;
    readonly now: string;
  };
};

export type RevokeAccessToken = {
  readonly type: 'RevokeAccessToken';
  readonly data: {
    readonly tokenId: string;
    readonly actorUserId: number;
    readonly reason: 'logout' | 'revoked';
    readonly now: string;
  };
};

export type ChangePassword = {
  readonly type: 'ChangePassword';
  readonly data: {
    readonly oldPasswordMatches: boolean;
    readonly newPasswordHash: string;
    /** The token used for this request survives; every other login token is revoked. */
    readonly currentTokenId: string;
    readonly now: string;
  };
};

export type UpdateProfile = {
  readonly type: 'UpdateProfile';
  readonly data: {
    readonly firstName?: string;
    readonly lastName?: string;
    readonly bio?: string;
    readonly location?: string;
    readonly avatarKey?: string | null;
    readonly now: string;
  };
};

export type SetStaffStatus = {
  readonly type: 'SetStaffStatus';
  readonly data: { readonly isStaff: boolean; readonly now: string };
};

export type UserCommand =
  RegisterUser | IssueAccessToken | RevokeAccessToken | ChangePassword | UpdateProfile | SetStaffStatus;

export const INVALID_CREDENTIALS = 'Unable to log in with provided credentials.';

function registered(state: UserState): RegisteredUser {
  if (state.status !== 'registered') throw new NotFoundError('User not found.');
  return state;
}

export function registerUser({ data }: RegisterUser, state: UserState): UserEvent[] {
  if (state.status === 'registered')
    throw InvalidFieldError.field('username', 'A user with that id already exists.');
  const { now, ...rest } = data;
  return [{ type: 'UserRegistered', data: { ...rest, registeredAt: now } }];
}

export function issueAccessToken({ data }: IssueAccessToken, state: UserState): AccessTokenIssued[] {
  if (state.status !== 'registered') throw InvalidFieldError.field('non_field_errors', INVALID_CREDENTIALS);
  if (data.kind === 'login' && data.passwordMatches !== true) {
    throw InvalidFieldError.field('non_field_errors', INVALID_CREDENTIALS);
  }
  if (data.expiresAt !== null && Date.parse(data.expiresAt) <= Date.parse(data.now)) {
    throw InvalidFieldError.field('expires_at', 'Expiry must be in the future.');
  }
  if (state.tokens.has(data.tokenId)) return []; // same command retried
  const { tokenId, kind, name, tokenHash, expiresAt, now } = data;
  return [
    {
      type: 'AccessTokenIssued',
      data: { userId: state.userId, tokenId, kind, name, tokenHash, createdAt: now, expiresAt },
    },
  ];
}

export function revokeAccessToken({ data }: RevokeAccessToken, state: UserState): AccessTokenRevoked[] {
  const user = registered(state);
  const token = user.tokens.get(data.tokenId);
  if (!token) throw new NotFoundError();
  if (user.userId !== data.actorUserId) throw new ForbiddenError('You do not own this token.');
  if (token.revoked) return [];
  return [
    {
      type: 'AccessTokenRevoked',
      data: { userId: user.userId, tokenId: data.tokenId, reason: data.reason, revokedAt: data.now },
    },
  ];
}

export function changePassword({ data }: ChangePassword, state: UserState): UserEvent[] {
  const user = registered(state);
  if (!data.oldPasswordMatches) {
    throw InvalidFieldError.field('old_password', 'Your old password was entered incorrectly.');
  }
  const revocations: AccessTokenRevoked[] = [...user.tokens]
    .filter(([id, t]) => t.kind === 'login' && !t.revoked && id !== data.currentTokenId)
    .map(([tokenId]) => ({
      type: 'AccessTokenRevoked',
      data: { userId: user.userId, tokenId, reason: 'password_changed', revokedAt: data.now },
    }));
  return [
    {
      type: 'UserPasswordChanged',
      data: { userId: user.userId, passwordHash: data.newPasswordHash, changedAt: data.now },
    },
    ...revocations,
  ];
}

export function updateProfile({ data }: UpdateProfile, state: UserState): UserEvent[] {
  const user = registered(state);
  const { now, ...changes } = data;
  const current: Record<string, unknown> = user;
  const changed = Object.fromEntries(
    Object.entries(changes).filter(([field, value]) => value !== undefined && current[field] !== value),
  );
  if (Object.keys(changed).length === 0) return [];
  return [{ type: 'UserProfileUpdated', data: { userId: user.userId, ...changed, updatedAt: now } }];
}

export function setStaffStatus({ data }: SetStaffStatus, state: UserState): UserEvent[] {
  const user = registered(state);
  if (user.isStaff === data.isStaff) return [];
  return [
    {
      type: 'UserStaffStatusChanged',
      data: { userId: user.userId, isStaff: data.isStaff, changedAt: data.now },
    },
  ];
}

export function decideUser(command: UserCommand, state: UserState): UserEvent[] {
  switch (command.type) {
    case 'RegisterUser':
      return registerUser(command, state);
    case 'IssueAccessToken':
      return issueAccessToken(command, state);
    case 'RevokeAccessToken':
      return revokeAccessToken(command, state);
    case 'ChangePassword':
      return changePassword(command, state);
    case 'UpdateProfile':
      return updateProfile(command, state);
    case 'SetStaffStatus':
      return setStaffStatus(command, state);
    default: {
      const unknown: never = command;
      throw new Error(`unknown command ${JSON.stringify(unknown)}`);
    }
  }
}
