import { type Static, Type } from '@sinclair/typebox';
import type { RouteSpec } from '#shared/http/routeSpec';
import { ValidationError } from '#shared/errors/httpErrors';
import { registerUser } from './registerUser';
import { registeredUserJson, registeredUserSchema } from '#shared/views/userViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { userRecordFromState } from './userRecord';

export const nameField = Type.String({ minLength: 1, maxLength: 150 });
export const passwordField = Type.String({ minLength: 8, maxLength: 1024 });

export const RegisterBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 254 }),
  username: Type.String({ minLength: 1, maxLength: 150, pattern: '^[\\w.@+-]+$' }),
  password: passwordField,
  password_confirm: Type.String(),
  first_name: nameField,
  last_name: nameField,
});
export type RegisterBody = Static<typeof RegisterBody>;

export const registerRoute = (deps: CommandDeps): RouteSpec<typeof RegisterBody> => ({
  method: 'post',
  path: '/api/auth/register/',
  operationId: 'register',
  summary: 'Create an account',
  description: 'Email and username are unique (case-insensitively). Passwords need at least 8 characters.',
  tags: ['auth'],
  auth: 'public',
  rateLimit: 'register',
  body: RegisterBody,
  responses: {
    201: { description: 'The new user', schema: registeredUserSchema },
    400: { description: 'Invalid or taken fields' },
  },
  async handler(ctx) {
    const body = ctx.body;
    if (body.password !== body.password_confirm)
      throw ValidationError.field('non_field_errors', 'Passwords do not match.');
    const passwordHash = await deps.passwords.hash(body.password);
    const { user, position } = await registerUser(
      { store: deps.store, ids: deps.ids, now: deps.clock(), logger: deps.logger },
      {
        email: body.email.trim(),
        username: body.username,
        firstName: body.first_name,
        lastName: body.last_name,
        passwordHash,
        isStaff: false,
      },
      commandContext(ctx),
    );
    return { status: 201, body: registeredUserJson(userRecordFromState(user), ctx.baseUrl), position };
  },
});
