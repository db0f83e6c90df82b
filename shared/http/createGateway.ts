import type { IncomingMessage, ServerResponse } from 'node:http';

/** Anything Express-app-shaped: (req, res) handles the request completely. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface GatewayOptions {
  readonly commandApp: RequestListener;
  readonly queryApp: RequestListener;
}

/** Paths the query app serves whatever the method (it answers 405 itself where needed). */
const QUERY_PREFIXES = ['/api/schema', '/api/docs', '/health', '/metrics'];
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The tus endpoint: the command API's for every method (HEAD reads an upload's offset there). */
const COMMAND_PREFIXES = ['/api/file-uploads/tus/'];

function isSystemPath(url: string): boolean {
  return QUERY_PREFIXES.some(
    (prefix) =>
      url.startsWith(prefix) && (url.length === prefix.length || '/?'.includes(url[prefix.length]!)),
  );
}

/**
 * The all-in-one's front door, and the same rule deploy/ gives the real gateway: reads go to the
 * query API, writes to the command API. OPTIONS (CORS preflight) is answered by the query app,
 * whose CORS middleware gives 204 like the command app's would. The tus endpoint is the command
 * API's, every method included.
 */
export function createGateway(options: GatewayOptions): RequestListener {
  return (req, res) => {
    const url = req.url ?? '/';
    const read =
      (READ_METHODS.has(req.method ?? 'GET') && !COMMAND_PREFIXES.some((prefix) => url.startsWith(prefix))) ||
      isSystemPath(url);
    (read ? options.queryApp : options.commandApp)(req, res);
  };
}
