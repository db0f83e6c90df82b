/** The parts of the service's JSON that bic reads (interface-spec section 2; extra fields pass through). */

export interface CurrentUser {
  readonly id: number;
  readonly username: string;
  readonly email: string;
}

export interface LoginReply {
  readonly token: string;
  readonly user: CurrentUser;
}

export interface AccessToken {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
  readonly last_used_at?: string | null;
  readonly expires_at: string | null;
  readonly is_revoked?: boolean;
}

export interface CreatedAccessToken extends AccessToken {
  readonly token: string;
}

export interface Page<T> {
  readonly count: number;
  readonly next: string | null;
  readonly previous: string | null;
  readonly results: T[];
}

export type Json = Record<string, unknown>;

export interface FileUpload {
  readonly id: string;
  readonly name: string;
  readonly filename?: string;
  readonly status: 'uploaded' | 'processing' | 'completed' | 'failed';
  readonly file_size_mb?: number;
  readonly metadata?: Record<string, unknown>;
}
