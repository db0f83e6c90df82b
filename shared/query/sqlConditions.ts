/**
 * A WHERE clause built from optional filters, every value a bind parameter ($1, $2...); the SQL
 * text of each condition comes from the route, never from the request.
 */
export class SqlConditions {
  private readonly conditions: string[] = [];
  private readonly values: unknown[] = [];

  /** Adds a bind parameter and returns its placeholder. */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** Adds a condition written with placeholders from `param`. */
  where(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /** An independent copy: conditions added to it later do not change this one (nor the reverse). */
  copy(): SqlConditions {
    const copy = new SqlConditions();
    copy.conditions.push(...this.conditions);
    copy.values.push(...this.values);
    return copy;
  }

  get whereSql(): string {
    return this.conditions.length === 0 ? '' : `WHERE ${this.conditions.map((c) => `(${c})`).join(' AND ')}`;
  }

  /** The bind values, plus any extra ones whose placeholders follow (e.g. LIMIT and OFFSET). */
  params(...extra: unknown[]): unknown[] {
    return [...this.values, ...extra];
  }

  /** Placeholder of the n-th extra value given to params (0-based). */
  extra(n: number): string {
    return `$${this.values.length + n + 1}`;
  }
}

/**
 * Placeholders for `conditions` that give one value one placeholder however often it is asked for:
 * for text written in several parts (a select list, a count's FROM) that must all name the same
 * values, so that none of them is left unreferenced by a statement that has only some parts.
 */
export function sharedParams(conditions: SqlConditions): Pick<SqlConditions, 'param'> {
  const placeholders = new Map<unknown, string>();
  return {
    param(value: unknown): string {
      const known = placeholders.get(value);
      if (known !== undefined) return known;
      const placeholder = conditions.param(value);
      placeholders.set(value, placeholder);
      return placeholder;
    },
  };
}
