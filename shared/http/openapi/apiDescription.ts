/** The cross-cutting behaviour every operation shares, as API users read it in the docs. */
export const DEFAULT_API_DESCRIPTION = `
Every path works with and without its trailing slash; links the service emits use the slash. Token
and file upload ids (UUIDs) name the same record whatever the case of their letters.

**Authentication.** Send \`Authorization: Token <token>\` or \`Authorization: Bearer <token>\`; both
accept a login token and a personal access token. A missing, invalid, expired or revoked token on an
endpoint that needs one is \`401\` with \`WWW-Authenticate\`. A token sent to a public endpoint is
still checked. A request with more than one \`Authorization\` (or \`Proxy-Authorization\`) header is
\`400\`.

**Caching.** Every answer carries \`X-Content-Type-Options: nosniff\`. Answers are
\`Cache-Control: no-store\` except public catalogue reads (GET of categories, species, atlases,
brains and media), which keep their weak \`ETag\` for \`If-None-Match\` (\`304\`) and, asked with a
token, are \`private, no-cache\`.

**Timeouts.** A request's headers must arrive within 20 s, and a JSON or form body within 30 s; an
upload may take as long as it needs but may not go silent for more than 30 s (\`408\`, connection
closed); an idle kept-alive connection is closed after 5 s (all configurable).

**Errors** are JSON, shaped like Django REST framework: \`{"detail": "..."}\`, or for validation
\`{"<field>": ["message", ...]}\` with \`non_field_errors\` for rules across fields. Malformed JSON
is \`400 {"detail": "JSON parse error - ..."}\`; an integer beyond the database's range (2147483647)
is \`400\` on its field, and a path id beyond it \`404\`; unknown routes \`404\`; a known path with another
method \`405\` with \`Allow\`; a stale \`If-Match\` \`409\`; a body over the limit \`413\`; an
unsupported \`Content-Type\` \`415\`; a server fault \`500\` with a \`request_id\`. Unknown query
parameters and unknown body fields are ignored.

**Rate limits** are shared by all instances and counted in fixed windows. Responses carry
\`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix time in seconds).
Over the limit: \`429 {"error": "rate_limited", "detail": "...", "retry_after": <seconds>}\` with
\`Retry-After\`. Defaults: login 10/minute per client address, and per user for password changes
(which count against the same limit: the old password can be guessed there); registration 20/hour
per client address; token creation 30/hour and uploads 120/hour per user; everything else
600/minute per user (per address when anonymous).

**Read your writes.** A write answers with \`X-Event-Position\`; it is sent only after the read side
has caught up with it (bounded wait). Another client (or a read through another instance) can send
that value as \`X-Min-Position\` on a GET to wait for the same.

**Safe retries.** Every POST, PUT, PATCH and DELETE accepts an \`Idempotency-Key\` header (a fresh
UUID per operation). A retry with the same key and body within 24 hours is not executed again: it
gets the first response again, with \`Idempotent-Replayed: true\`. The same key with another request
is \`422\`. Details with the header's parameter description.

**Concurrent writes.** Writes that race on one resource are retried on the server; \`409\` is left
for a stale \`If-Match\` (and for the rare write that still loses after a few seconds of retries).

**Tracing.** \`X-Request-Id\` is echoed (or generated) on every response and appears in the logs.

**CORS.** Any origin; methods GET, POST, PUT, PATCH, DELETE, OPTIONS; preflight answered \`204\`.
`.trim();
