import { NotFoundError, ForbiddenError, InvalidFieldError } from '#shared/domain/domainErrors';
import type { UserCommand } from './decide';
import { decideUser } from './decide';
import type { UserEvent } from './events';
import { evolveUser, initialUserState } from './events';

const now = '2026-01-01T00:00:00.000Z';
const registered: UserEvent = {
  type: 'UserRegistered',
  data: {
    userId: 7,
    email: 'ada@example.org',
    username: 'ada',
    firstName: 'Ada',
    lastName: 'L',
    passwordHash: 'h1',
    isStaff: false,
    registeredAt: now,
  },
};
const issued = (tokenId: string, kind: 'login' | 'personal'): UserEvent => ({
  type: 'AccessTokenIssued',
  data: {
    userId: 7,
    tokenId,
    kind,
    name: kind,
    tokenHash: `hash-${tokenId}`,
    createdAt: now,
    expiresAt: null,
  },
});

function given(...events: UserEvent[]) {
  const state = events.reduce(evolveUser, initialUserState());
  return {
    when: (command: UserCommand) => ({
      then: (expected: UserEvent[]) => expect(decideUser(command, state)).toEqual(expected),
      thenThrows: (type: new (...args: never[]) => Error, fields?: unknown) => {
        let caught: unknown;
        try {
          decideUser(command, state);
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(type);
        if (fields !== undefined) expect((caught as InvalidFieldError).fields).toEqual(fields);
      },
    }),
  };
}

describe('identity decider', () => {
  test('registering a new user records it', () => {
    const { type: _t, data } = registered;
    const { registeredAt: _r, ...rest } = data;
    given()
      .when({ type: 'RegisterUser', data: { ...rest, now } })
      .then([registered]);
  });

  test('login with a wrong password is refused with the DRF message', () => {
    given(registered)
      .when({
        type: 'IssueAccessToken',
        data: {
          tokenId: 't1',
          kind: 'login',
          name: 'login',
          tokenHash: 'x',
          expiresAt: null,
          passwordMatches: false,
          now,
        },
      })
      .thenThrows(InvalidFieldError, { non_field_errors: ['Unable to log in with provided credentials.'] });
  });

  test('a personal token must expire in the future', () => {
    given(registered)
      .when({
        type: 'IssueAccessToken',
        data: {
          tokenId: 't1',
          kind: 'personal',
          name: 'cli',
          tokenHash: 'x',
          expiresAt: '2025-01-01T00:00:00Z',
          now,
        },
      })
      .thenThrows(InvalidFieldError, { expires_at: ['Expiry must be in the future.'] });
  });

  test('issuing the same token id twice is a no-op (retried command)', () => {
    given(registered, issued('t1', 'personal'))
      .when({
        type: 'IssueAccessToken',
        data: { tokenId: 't1', kind: 'personal', name: 'cli', tokenHash: 'x', expiresAt: null, now },
      })
      .then([]);
  });

  test('revoking is idempotent, refuses strangers, and 404s unknown tokens', () => {
    const revoke = (tokenId: string, actorUserId = 7): UserCommand => ({
      type: 'RevokeAccessToken',
      data: { tokenId, actorUserId, reason: 'revoked', now },
    });
    const revoked: UserEvent = {
      type: 'AccessTokenRevoked',
      data: { userId: 7, tokenId: 't1', reason: 'revoked', revokedAt: now },
    };
    given(registered, issued('t1', 'personal')).when(revoke('t1')).then([revoked]);
    given(registered, issued('t1', 'personal'), revoked).when(revoke('t1')).then([]);
    given(registered, issued('t1', 'personal')).when(revoke('t1', 8)).thenThrows(ForbiddenError);
    given(registered).when(revoke('nope')).thenThrows(NotFoundError);
  });

  test('a password change revokes the other login tokens but keeps personal tokens and the current one', () => {
    given(registered, issued('current', 'login'), issued('other', 'login'), issued('pat', 'personal'))
      .when({
        type: 'ChangePassword',
        data: { oldPasswordMatches: true, newPasswordHash: 'h2', currentTokenId: 'current', now },
      })
      .then([
        { type: 'UserPasswordChanged', data: { userId: 7, passwordHash: 'h2', changedAt: now } },
        {
          type: 'AccessTokenRevoked',
          data: { userId: 7, tokenId: 'other', reason: 'password_changed', revokedAt: now },
        },
      ]);
  });

  test('a wrong old password is a 400 on old_password', () => {
    given(registered)
      .when({
        type: 'ChangePassword',
        data: { oldPasswordMatches: false, newPasswordHash: 'h2', currentTokenId: 'c', now },
      })
      .thenThrows(InvalidFieldError, { old_password: ['Your old password was entered incorrectly.'] });
  });

  test('a profile update records only what changed', () => {
    given(registered)
      .when({ type: 'UpdateProfile', data: { firstName: 'Ada', bio: 'neuro', now } })
      .then([{ type: 'UserProfileUpdated', data: { userId: 7, bio: 'neuro', updatedAt: now } }]);
    given(registered)
      .when({ type: 'UpdateProfile', data: { firstName: 'Ada', now } })
      .then([]);
  });

  test('commands on a missing user are 404', () => {
    given()
      .when({ type: 'UpdateProfile', data: { bio: 'x', now } })
      .thenThrows(NotFoundError);
  });
});
