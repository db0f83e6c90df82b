import { z } from 'zod';

/**
 * Builders of one environment variable's schema. Each takes one options object from which both the
 * validation and the documentation row (`variableDocs`) are made, so a bound or a default cannot say
 * one thing in the docs and another at start-up. Values arrive as strings, empty ones already
 * removed (an empty variable counts as unset).
 */
export interface VariableDoc {
  /** What the variable takes, with its bounds: "integer 1–65535", "flag", "URL". */
  readonly type: string;
  /** As written in the table: "`8000`", "–" (unset), or words for a computed default. */
  readonly default: string;
  readonly description: string;
}

export const variableDocs = z.registry<VariableDoc>();

interface Described {
  readonly description: string;
  /** Words for a default computed at start-up ("cores − 1"), in place of the value. */
  readonly defaultLabel?: string;
}

const code = (value: string | number): string => `\`${value}\``;
const UNSET = '–';

export function documented<T extends z.ZodType>(schema: T, doc: VariableDoc): T {
  variableDocs.add(schema, doc);
  return schema;
}

interface IntegerOptions extends Described {
  readonly min: number;
  readonly max?: number;
}

function integerSchema(min: number, max: number) {
  const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
  const error = (issue: { input?: unknown }) => `must be an integer ${range}, got "${String(issue.input)}"`;
  return z
    .string()
    .trim()
    .regex(/^\d+$/, { error })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error })
        .max(max, { error: (issue) => `must be at most ${max}, got "${String(issue.input)}"` }),
    );
}

type IntegerSchema = ReturnType<typeof integerSchema>;

/** A whole number within bounds; without a default, unset stays undefined. */
export function integer(
  options: IntegerOptions & { default: number | (() => number) },
): z.ZodDefault<IntegerSchema>;
export function integer(options: IntegerOptions): z.ZodOptional<IntegerSchema>;
export function integer(options: IntegerOptions & { default?: number | (() => number) }) {
  const { min, max = Number.MAX_SAFE_INTEGER, default: fallback } = options;
  const schema = integerSchema(min, max);
  const doc = {
    type: max === Number.MAX_SAFE_INTEGER ? `integer ≥ ${min}` : `integer ${min}–${max}`,
    default: options.defaultLabel ?? (typeof fallback === 'number' ? code(fallback) : UNSET),
    description: options.description,
  };
  if (fallback === undefined) return documented(schema.optional(), doc);
  return documented(schema.default(typeof fallback === 'number' ? () => fallback : fallback), doc);
}

export function flag(options: Described & { default: boolean }) {
  const schema = z
    .enum(['1', '0', 'true', 'false'], {
      error: (issue) => `must be 1, 0, true or false, got "${String(issue.input)}"`,
    })
    .transform((raw) => raw === '1' || raw === 'true')
    .default(options.default);
  return documented(schema, {
    type: 'flag (`true`/`1`, `false`/`0`)',
    default: code(String(options.default)),
    description: options.description,
  });
}

interface TextOptions extends Described {
  readonly pattern?: RegExp;
  /** What the pattern allows, as the error says it: "may hold letters, digits, …". */
  readonly patternHint?: string;
}

function textSchema({ pattern, patternHint }: TextOptions) {
  const schema = z.string();
  if (!pattern) return schema;
  const hint = patternHint ?? `must match ${String(pattern)}`;
  return schema.regex(pattern, { error: (issue) => `${hint}, got "${String(issue.input)}"` });
}

/** Free text, or text matching a pattern; without a default, unset stays undefined. */
export function text(options: TextOptions & { default: string }): z.ZodDefault<z.ZodString>;
export function text(options: TextOptions): z.ZodOptional<z.ZodString>;
export function text(options: TextOptions & { default?: string }) {
  const schema = textSchema(options);
  const doc = {
    type: options.patternHint ? `text (${options.patternHint.replace(/^may hold /, '')})` : 'text',
    default: options.defaultLabel ?? (options.default === undefined ? UNSET : code(options.default)),
    description: options.description,
  };
  return options.default === undefined
    ? documented(schema.optional(), doc)
    : documented(schema.default(options.default), doc);
}

export function url(options: Described) {
  const schema = z.string().refine((raw) => URL.canParse(raw), {
    error: (issue) => `must be a URL, got "${String(issue.input)}"`,
  });
  return documented(schema.optional(), {
    type: 'URL',
    default: options.defaultLabel ?? UNSET,
    description: options.description,
  });
}

export interface Endpoint {
  readonly endPoint: string;
  readonly port: number;
  readonly useSSL: boolean;
}

/** A URL taken apart into what the MinIO client wants, parsed here once. */
export function endpoint(options: Described) {
  const schema = z.string().transform((raw, ctx): Endpoint => {
    if (!URL.canParse(raw)) {
      ctx.addIssue({ code: 'custom', input: raw, message: `must be a URL, got "${raw}"` });
      return z.NEVER;
    }
    const { hostname, port, protocol } = new URL(raw);
    const useSSL = protocol === 'https:';
    return { endPoint: hostname, port: port ? Number(port) : useSSL ? 443 : 80, useSSL };
  });
  return documented(schema.optional(), {
    type: 'URL',
    default: options.defaultLabel ?? UNSET,
    description: options.description,
  });
}

/** One of `values`; the first is the default. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T, options: Described) {
  const schema = z
    .enum(values, {
      error: (issue) => `must be one of ${values.join(', ')}, got "${String(issue.input)}"`,
    })
    .default(values[0]);
  return documented(schema, {
    type: values.map(code).join(' \\| '),
    default: code(values[0]),
    description: options.description,
  });
}

/** A comma-separated list, entries trimmed, empty entries dropped; each entry must match `entry`. */
export function list(options: Described & { entry: RegExp; entryHint: string; lowerCase?: boolean }) {
  const schema = z.string().transform((raw, ctx) => {
    const entries = raw
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    const bad = entries.find((entry) => !options.entry.test(entry));
    if (bad !== undefined) {
      ctx.addIssue({ code: 'custom', input: raw, message: `${options.entryHint}, got "${bad}"` });
      return z.NEVER;
    }
    return options.lowerCase ? entries.map((entry) => entry.toLowerCase()) : entries;
  });
  return documented(schema.default([]), {
    type: 'comma-separated list',
    default: options.defaultLabel ?? UNSET,
    description: options.description,
  });
}

export interface RateLimitRule {
  readonly limit: number;
  readonly windowMs: number;
}

const WINDOW_MS: Record<string, number> = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };
const UNIT_NAMES: Record<string, string> = {
  sec: 'second',
  s: 'second',
  min: 'minute',
  m: 'minute',
  h: 'hour',
  d: 'day',
};
const RULE = /^(\d+)\s*\/\s*(second|sec|s|minute|min|m|hour|h|day|d)$/;

function parseRule(raw: string): RateLimitRule | undefined {
  const match = RULE.exec(raw.trim());
  if (!match) return undefined;
  const unit = UNIT_NAMES[match[2]!] ?? match[2]!;
  return { limit: Number(match[1]), windowMs: WINDOW_MS[unit]! };
}

/** "10/minute", "20/hour", "600/min"; the default is written the same way. */
export function rateLimit(fallback: string, options: Described) {
  const schema = z
    .string()
    .transform((raw, ctx) => {
      const rule = parseRule(raw);
      if (rule) return rule;
      ctx.addIssue({ code: 'custom', input: raw, message: `must look like "10/minute", got "${raw}"` });
      return z.NEVER;
    })
    .default(parseRule(fallback)!);
  return documented(schema, {
    type: 'count/period (`second`, `minute`, `hour`, `day`)',
    default: code(fallback),
    description: options.description,
  });
}
