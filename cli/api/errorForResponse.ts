import { CliError, ExitCode } from '#cli/exitCodes';

/** The one line a user reads for a refused request, with the exit code for its kind (exitCodes.ts). */
export function errorForResponse(status: number, body: unknown): CliError {
  const detail = detailOf(body);
  if (status === 401)
    return new CliError(
      `not authenticated: ${detail ?? 'the token is invalid, expired or revoked'} (run \`bic login\`)`,
      ExitCode.unauthenticated,
    );
  if (status === 403) return new CliError(`forbidden: ${detail ?? 'not allowed'}`, ExitCode.forbidden);
  if (status === 404) return new CliError(`not found: ${detail ?? 'no such record'}`, ExitCode.notFound);
  if (status === 429)
    return new CliError(`rate limited: ${detail ?? 'too many requests'}`, ExitCode.rateLimited);
  if (status >= 500) {
    const id = requestIdOf(body);
    return new CliError(
      `server error ${status}: ${detail ?? 'the server failed'}${id ? ` (request id ${id})` : ''}`,
      ExitCode.unavailable,
    );
  }
  const fields = detail === undefined ? fieldErrors(body) : undefined;
  return new CliError(`invalid request (${status}): ${detail ?? fields ?? 'refused'}`, ExitCode.invalid);
}

function detailOf(body: unknown): string | undefined {
  if (!isRecord(body)) return typeof body === 'string' && body.trim() ? oneLine(body) : undefined;
  return typeof body.detail === 'string' ? oneLine(body.detail) : undefined;
}

const requestIdOf = (body: unknown): string | undefined =>
  isRecord(body) && typeof body.request_id === 'string' ? body.request_id : undefined;

/** DRF validation bodies: `{"field": ["message", ...]}` → `field: message; other: message`. */
function fieldErrors(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const parts = Object.entries(body).map(([field, messages]) => {
    const text = Array.isArray(messages) ? messages.map(String).join(' ') : JSON.stringify(messages);
    return field === 'non_field_errors' ? text : `${field}: ${text}`;
  });
  return parts.length ? oneLine(parts.join('; ')) : undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim().slice(0, 500);
