/** The SQLSTATE codes the service reacts to by name. */
export const SQLSTATE = {
  undefinedTable: '42P01',
  undefinedColumn: '42703',
  invalidSchemaName: '3F000',
  queryCanceled: '57014',
} as const;

/** The SQLSTATE of an error from PostgreSQL (pg sets `code`), undefined for any other error. */
export function sqlState(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}
