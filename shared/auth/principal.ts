/** Who is making a request, as established from an Authorization header. */
export interface Principal {
  readonly userId: number;
  readonly username: string;
  readonly email: string;
  readonly isStaff: boolean;
  /** UUID of the token used (login token or personal access token). */
  readonly tokenId: string;
  readonly tokenKind: 'login' | 'personal';
}

/**
 * Resolves `Authorization: Token <t>` / `Bearer <t>` to a principal.
 * Returns undefined for a missing header; throws AuthenticationError for a bad, revoked or expired token.
 */
export interface Authenticator {
  authenticate(authorizationHeader: string | undefined): Promise<Principal | undefined>;
}
