import type { RouteSpec } from '#shared/http/routeSpec';
import { ValidationError } from '#shared/errors/httpErrors';
import { registerUser } from './registerUser';
import { registeredUserJson, userSchemas } from '#shared/views/userViews';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { commandContext } from '#services/command-api/commandDeps';
import { userRecordFromState } from './userRecord';

export interface RegisterBody {
  email: string;
  username: string;
  password: string;
  password_confirm: string;
  first_name: string;
  last_name: string;
}

export const nameField = { type: 'string', minLength: 1, maxLength: 150 } as const;
export const passwordField = { type: 'string', minLength: 8, maxLength: 1024 } as const;

export const registerRoute = (deps: CommandDeps): RouteSpec<RegisterBody> => ({
  method: 'post',
  path: '/api/auth/register/',
  operationId: 'register',
  summary: 'Create an account',
  description: 'Email and username are unique (case-insensitively). Passwords need at least 8 characters.',
  tags: ['auth'],
  auth: 'public',
  rateLimit: 'register',
  body: {
    type: 'object',
    required: ['email', 'username', 'password', 'password_confirm', 'first_name', 'last_name'],
    properties: {
      email: { type: 'string', format: 'email', maxLength: 254 },
      username: { type: 'string', minLength: 1, maxLength: 150, pattern: '^[\\w.@+-]+$' },
      password: passwordField,
      password_confirm: { type: 'string' },
      first_name: nameField,
      last_name: nameField,
    },
  },
  responses: {
    201: { description: 'The new user', schema: userSchemas.registered },
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
