import { errorForResponse } from '#cli/api/errorForResponse';
import { retryAfterSeconds, retryDelayMs } from '#cli/api/retryDelay';
import { normaliseServer } from '#cli/context';
import { ExitCode } from '#cli/exitCodes';
import { dispositionFilename } from '#cli/transfer/contentDisposition';

describe('errorForResponse', () => {
  it.each([
    [
      401,
      { detail: 'Invalid token.' },
      ExitCode.unauthenticated,
      'not authenticated: Invalid token. (run `bic login`)',
    ],
    [403, { detail: 'Nope.' }, ExitCode.forbidden, 'forbidden: Nope.'],
    [404, { detail: 'Not found.' }, ExitCode.notFound, 'not found: Not found.'],
    [413, { detail: 'Too large.' }, ExitCode.invalid, 'invalid request (413): Too large.'],
    [429, { detail: 'Slow down.' }, ExitCode.rateLimited, 'rate limited: Slow down.'],
    [502, '<html>bad gateway</html>', ExitCode.unavailable, 'server error 502: <html>bad gateway</html>'],
  ])('%i → exit code and one line', (status, body, code, message) => {
    expect(errorForResponse(status, body)).toMatchObject({ exitCode: code, message });
  });

  it('a validation body is field: message, fields joined, non_field_errors without a name', () => {
    const error = errorForResponse(400, {
      name: ['This field is required.'],
      color: ['Not a colour.', 'Use #rrggbb.'],
      non_field_errors: ['Give an atlas or a category.'],
    });
    expect(error.message).toBe(
      'invalid request (400): name: This field is required.; color: Not a colour. Use #rrggbb.; Give an atlas or a category.',
    );
    expect(error.exitCode).toBe(ExitCode.invalid);
  });

  it('a message stays one line however the server wrote it', () => {
    expect(errorForResponse(500, { detail: 'line one\nline two', request_id: 'r1' }).message).toBe(
      'server error 500: line one line two (request id r1)',
    );
  });
});

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP dates, and ignores nonsense', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('7', now)).toBe(7);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterSeconds(null, now)).toBeUndefined();
  });

  it('is bounded to 60 s; without it the backoff doubles from 0.5 s up to 8 s', () => {
    expect(retryDelayMs(1, 3600)).toBe(60_000);
    expect([1, 2, 3, 4, 5, 6].map((attempt) => retryDelayMs(attempt, undefined))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000,
    ]);
  });
});

describe('dispositionFilename', () => {
  it('prefers the RFC 5987 name and keeps only a base name', () => {
    expect(dispositionFilename(`attachment; filename="scan_.nii"; filename*=UTF-8''scan%C3%A9.nii`)).toBe(
      'scané.nii',
    );
    expect(dispositionFilename('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(dispositionFilename('attachment; filename=".."')).toBeUndefined();
    expect(dispositionFilename(null)).toBeUndefined();
  });
});

describe('normaliseServer', () => {
  it('keeps scheme, host and path prefix without the trailing slash; refuses other schemes', () => {
    expect(normaliseServer('https://cat.example.org/api-root/')).toBe('https://cat.example.org/api-root');
    expect(normaliseServer('http://localhost:8000')).toBe('http://localhost:8000');
    expect(() => normaliseServer('ftp://x')).toThrow('not an http(s) server URL');
    expect(() => normaliseServer('localhost')).toThrow();
  });
});
