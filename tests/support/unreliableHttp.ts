/**
 * HTTP calls to a service that may be killed at any moment. A call the service never answered is
 * 'unreachable': its write may or may not have happened, so callers must not count on either.
 */
export type CallResult =
  | { readonly status: number; readonly body: unknown }
  | { readonly status: 'unreachable'; readonly error: string };

export interface CallOptions {
  readonly token?: string;
  readonly body?: unknown;
}

/** Long enough for a read-your-writes wait after a restart, short enough to never hang a test. */
const CALL_TIMEOUT_MS = 15_000;

export async function callApi(
  baseUrl: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<CallResult> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Token ${options.token}`;
  // A FormData body goes as multipart (fetch sets the boundary); anything else as JSON.
  const multipart = options.body instanceof FormData;
  if (options.body !== undefined && !multipart) headers['content-type'] = 'application/json';
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: multipart ? options.body : options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    return { status: response.status, body: parseBody(await response.text()) };
  } catch (error) {
    return { status: 'unreachable', error: socketErrorOf(error) };
  }
}

/** A body that is not JSON is kept as text: it is evidence for a failure message, not a crash. */
function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** fetch hides the socket error (ECONNREFUSED, ECONNRESET) in `cause`. */
function socketErrorOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
