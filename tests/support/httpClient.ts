export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON when the response is JSON, else the text. */
  readonly body: any;
  readonly text: string;
}

export interface RequestOptions {
  readonly json?: unknown;
  readonly body?: RequestInit['body'];
  readonly token?: string;
  /** 'Token' (default) or 'Bearer'. */
  readonly scheme?: string;
  readonly headers?: Record<string, string>;
}

/**
 * A tiny HTTP client for the service: what a REST client sends, nothing more. The base URL may be
 * given as a function, read at each request: a client for a service a hook starts later.
 */
export function client(baseUrl: string | (() => string)) {
  const base = typeof baseUrl === 'string' ? () => baseUrl : baseUrl;
  async function request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.Authorization = `${options.scheme ?? 'Token'} ${options.token}`;
    let body = options.body;
    if (options.json !== undefined) {
      headers['Content-Type'] ??= 'application/json';
      body = JSON.stringify(options.json);
    }
    const response = await fetch(base() + path, { method, headers, body });
    const text = await response.text();
    const isJson = (response.headers.get('content-type') ?? '').includes('json');
    return {
      status: response.status,
      headers: response.headers,
      body: isJson && text ? JSON.parse(text) : text,
      text,
    };
  }
  return {
    request,
    get: (path: string, o?: RequestOptions) => request('GET', path, o),
    post: (path: string, o?: RequestOptions) => request('POST', path, o),
    patch: (path: string, o?: RequestOptions) => request('PATCH', path, o),
    put: (path: string, o?: RequestOptions) => request('PUT', path, o),
    delete: (path: string, o?: RequestOptions) => request('DELETE', path, o),
  };
}

export type Client = ReturnType<typeof client>;

let counter = 0;

/** Registers a fresh user and logs in; returns its credentials and login token. */
export async function newUser(api: Client, overrides: Record<string, string> = {}) {
  const n = `${process.pid}${Date.now().toString(36)}${counter++}`;
  const user = {
    email: `user${n}@example.org`,
    username: `user${n}`,
    password: 'correct-horse-battery',
    password_confirm: 'correct-horse-battery',
    first_name: 'Santiago',
    last_name: 'Ramón y Cajal',
    ...overrides,
  };
  const registered = await api.post('/api/auth/register/', { json: user });
  if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${registered.text}`);
  const login = await api.post('/api/auth/login/', { json: { email: user.email, password: user.password } });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
  return { ...user, id: registered.body.id as number, token: login.body.token as string };
}
