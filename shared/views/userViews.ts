import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from './nullable';

/** JSON representations of a user, per interface-spec 2.2 (which fields appear where). */
export interface UserRecord {
  readonly id: number;
  readonly email: string;
  readonly username: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly bio: string;
  readonly location: string;
  readonly avatarKey: string | null;
  readonly isStaff: boolean;
}

export const STAFF_GROUP = { id: 2, name: 'curators' } as const;
export const DEFAULT_GROUP = { id: 1, name: 'researchers' } as const;

export function avatarUrl(baseUrl: string, key: string | null): string | null {
  return key ? `${baseUrl}/media/${key}/` : null;
}

/** Registration response. */
export const registeredUserJson = (u: UserRecord, baseUrl: string): RegisteredUserJson => ({
  id: u.id,
  username: u.username,
  email: u.email,
  first_name: u.firstName,
  last_name: u.lastName,
  avatar: avatarUrl(baseUrl, u.avatarKey),
});

/** GET /api/auth/me/. */
export const currentUserJson = (u: UserRecord, baseUrl: string) => ({
  ...registeredUserJson(u, baseUrl),
  bio: u.bio,
  location: u.location,
});

/** The `user` of a login response. */
export const loginUserJson = (u: UserRecord, baseUrl: string) => ({
  ...currentUserJson(u, baseUrl),
  is_staff: u.isStaff,
});

/** GET and PATCH /api/profile/. */
export const profileJson = (u: UserRecord, baseUrl: string) => ({
  id: u.id,
  username: u.username,
  email: u.email,
  first_name: u.firstName,
  last_name: u.lastName,
  avatar: avatarUrl(baseUrl, u.avatarKey),
  bio: u.bio,
  location: u.location,
  group: u.isStaff ? STAFF_GROUP : DEFAULT_GROUP,
});

/** Registration response. */
export const registeredUserSchema = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  email: Type.String({ format: 'email' }),
  first_name: Type.String(),
  last_name: Type.String(),
  avatar: Nullable(Type.String({ format: 'uri' })),
});
export type RegisteredUserJson = Static<typeof registeredUserSchema>;

export const userSchemas = {
  group: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } },
  /** GET /api/auth/me/; the profile adds `group`. */
  current: {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      username: { type: 'string' },
      email: { type: 'string' },
      first_name: { type: 'string' },
      last_name: { type: 'string' },
      avatar: { type: ['string', 'null'] },
      bio: { type: 'string' },
      location: { type: 'string' },
    },
  },
} as const;
