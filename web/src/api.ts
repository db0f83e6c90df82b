/** The service's own API, same origin, with the session's token (kept in sessionStorage, never a cookie). */

const TOKEN_KEY = 'bic.token';

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string | null): void {
  try {
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage refused (private mode): the token lives in memory only, through the session state.
  }
}

/** A DRF-shaped error: `detail`, or messages per field (`non_field_errors` across fields). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(typeof body.detail === 'string' ? body.detail : `The service answered ${status}.`);
  }

  /** The messages about one field (DRF's `{"field": ["message"]}`), joined. */
  fieldMessage(field: string): string | undefined {
    const value = this.body[field];
    if (Array.isArray(value)) return value.map(String).join(' ');
    return typeof value === 'string' ? value : undefined;
  }
}

/** Whatever a failed promise rejected with, as an Error a form can show. */
export const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

/** What a form shows of a failed request: a field's messages, and what concerns no one field. */
export function formErrors(error: ApiError | Error | undefined): {
  field: (name: string) => string | undefined;
  general: string | undefined;
} {
  return {
    field: (name) => (error instanceof ApiError ? error.fieldMessage(name) : undefined),
    general:
      error instanceof ApiError
        ? (error.fieldMessage('non_field_errors') ??
          (typeof error.body.detail === 'string' ? error.body.detail : undefined))
        : error?.message,
  };
}

export interface ApiOptions {
  readonly method?: string;
  readonly json?: unknown;
  readonly body?: BodyInit;
  readonly signal?: AbortSignal;
  readonly headers?: Record<string, string>;
  /** The browser cache's part (fetch's `cache`). */
  readonly cache?: RequestCache;
}

export function authHeaders(): Record<string, string> {
  const token = storedToken();
  return token ? { Authorization: `Token ${token}` } : {};
}

export async function api<T>(path: string, options: ApiOptions = {}): Promise<T> {
  return (await apiWithEtag<T>(path, options)).body;
}

/** The answer with its ETag (for If-Match on PUT, PATCH and DELETE). */
export async function apiWithEtag<T>(
  path: string,
  options: ApiOptions = {},
): Promise<{ body: T; etag: string | null }> {
  const headers: Record<string, string> = {
    Accept: 'application/json',
    ...authHeaders(),
    ...options.headers,
  };
  let body = options.body;
  if (options.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(path, {
    method: options.method ?? 'GET',
    headers,
    body,
    signal: options.signal,
    cache: options.cache ?? 'default',
  });
  const etag = response.headers.get('ETag');
  if (response.status === 204) return { body: undefined as T, etag };
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = { detail: text.slice(0, 200) };
  }
  if (!response.ok) {
    const errorBody =
      parsed && typeof parsed === 'object' && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : {};
    throw new ApiError(response.status, errorBody);
  }
  return { body: parsed as T, etag };
}

/** The stream revision an ETag names (W/"<revision>" or W/"<revision>.<digest>"). */
export function etagRevision(etag: string | null): number | undefined {
  const match = etag ? /^(?:W\/)?"(\d+)(?:\.[^"]*)?"$/.exec(etag) : null;
  return match ? Number(match[1]) : undefined;
}

/** A URL of the service as a path of this origin (the API's links are absolute). */
export function localPath(url: string): string {
  try {
    const parsed = new URL(url, location.origin);
    return parsed.origin === location.origin ? parsed.pathname + parsed.search : url;
  } catch {
    return url;
  }
}

export interface Named {
  readonly id: number;
  readonly name: string;
}

export interface BrainA {
  readonly id: number;
  readonly readable_id: string;
  readonly name: string;
  readonly description: string;
  readonly date_uploaded: string;
  readonly verified: boolean;
  readonly atlas: (Named & { slug: string }) | null;
  readonly species: (Named & { scientific_name: string; category: Named | null }) | null;
  readonly uploader: { id: number; username: string; email?: string } | null;
  readonly is_reference: boolean;
  readonly file_size_mb: number;
  readonly visibility: string;
  readonly embargo_until: string | null;
  readonly preview_url: string | null;
  readonly color?: string;
  readonly metadata: Record<string, unknown>;
}

export interface BrainB {
  readonly id: number;
  readonly website: string;
  readonly extra_link: string;
  readonly category: number | null;
  readonly s3_url: string;
  readonly zarr_file: string;
  readonly is_reference: boolean;
  readonly atlas: number | null;
}

export interface FacetValue {
  readonly id: number;
  readonly name: string;
  readonly count: number;
}

export interface Facets {
  species?: FacetValue[];
  atlas?: FacetValue[];
  category?: FacetValue[];
  verified?: { value: boolean; count: number }[];
}

export interface Page<T> {
  readonly count: number;
  readonly next: string | null;
  readonly previous: string | null;
  readonly results: T[];
  readonly facets?: Facets;
}

export interface Me {
  readonly id: number;
  readonly username: string;
  readonly email: string;
  readonly first_name?: string;
  readonly last_name?: string;
  /** `curators` for staff (decisions.md "Authentication"). */
  readonly group?: { id: number; name: string };
}

export const isStaff = (me: Me | null): boolean => me?.group?.name === 'curators';
