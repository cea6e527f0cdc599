/**
 * Whether a driver error is a unique-constraint violation (PostgreSQL 23505, SQLite's UNIQUE): a concurrent
 * writer took the same key, which callers turn into their own refusal instead of a 500.
 */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE'
}
