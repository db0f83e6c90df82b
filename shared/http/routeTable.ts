import { BadRequestError } from '#shared/errors/httpErrors';

export interface RouteMatch<T> {
  readonly value: T;
  readonly template: string;
  readonly params: Record<string, string>;
}

interface DynamicRoute<T> {
  readonly template: string;
  readonly regex: RegExp;
  readonly paramNames: readonly string[];
  readonly value: T;
}

interface MethodRoutes<T> {
  readonly exact: Map<string, { template: string; value: T }>;
  readonly dynamic: DynamicRoute<T>[];
}

const PARAM = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const METHOD_ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** '/api/tokens/' and '/api/tokens' are the same resource (decisions.md "General"). */
export function normalisePath(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
}

function compile(template: string): { regex: RegExp; paramNames: string[] } | undefined {
  const paramNames: string[] = [];
  const normalised = normalisePath(template);
  let source = '';
  let last = 0;
  for (const match of normalised.matchAll(PARAM)) {
    source += escapeRegex(normalised.slice(last, match.index)) + '([^/]+)';
    paramNames.push(match[1]!);
    last = match.index + match[0].length;
  }
  if (paramNames.length === 0) return undefined;
  source += escapeRegex(normalised.slice(last));
  return { regex: new RegExp(`^${source}$`), paramNames };
}

function decodeParam(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new BadRequestError('Malformed percent-encoding in the request path.');
  }
}

/**
 * Routes by method and OpenAPI path template. Templates without parameters are found with one
 * map lookup; the others by regex in registration order. Matching is case-sensitive.
 */
export class RouteTable<T> {
  private readonly byMethod = new Map<string, MethodRoutes<T>>();

  add(method: string, template: string, value: T): void {
    const upper = method.toUpperCase();
    let routes = this.byMethod.get(upper);
    if (!routes) {
      routes = { exact: new Map(), dynamic: [] };
      this.byMethod.set(upper, routes);
    }
    const compiled = compile(template);
    if (compiled) routes.dynamic.push({ template, value, ...compiled });
    else routes.exact.set(normalisePath(template), { template, value });
  }

  /** `path` is the raw (still percent-encoded) path; HEAD falls back to GET. */
  match(method: string, path: string): RouteMatch<T> | undefined {
    const found = this.matchMethod(method, normalisePath(path));
    if (found || method !== 'HEAD') return found;
    return this.matchMethod('GET', normalisePath(path));
  }

  /** Methods (for an Allow header) under which some route serves this path; [] when none. */
  allowedMethods(path: string): string[] {
    const normalised = normalisePath(path);
    const methods = METHOD_ORDER.filter((method) => this.matchMethod(method, normalised) !== undefined);
    if (methods.length === 0) return methods;
    if (methods.includes('GET')) methods.push('HEAD');
    methods.push('OPTIONS');
    return methods;
  }

  private matchMethod(method: string, path: string): RouteMatch<T> | undefined {
    const routes = this.byMethod.get(method);
    if (!routes) return undefined;
    const exact = routes.exact.get(path);
    if (exact) return { value: exact.value, template: exact.template, params: {} };
    for (const route of routes.dynamic) {
      const match = route.regex.exec(path);
      if (!match) continue;
      const params: Record<string, string> = {};
      route.paramNames.forEach((name, i) => (params[name] = decodeParam(match[i + 1]!)));
      return { value: route.value, template: route.template, params };
    }
    return undefined;
  }
}
