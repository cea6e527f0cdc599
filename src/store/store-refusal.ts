/**
 * A driver's failure in words: its message, with its code when the message does not already say it
 * (`database "w" does not exist (3D000)`, `connect ECONNREFUSED 127.0.0.1:5432`); each of an AggregateError's.
 */
export function failureText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return [...new Set(error.errors.map(failureText))].join('; ')
  const message = error instanceof Error ? error.message || error.name : String(error)
  const code = codeOf(error)
  return code !== null && !message.includes(code) ? `${message} (${code})` : message
}

/** The driver's code of an error (`3D000`, `ECONNREFUSED`, `SQLITE_BUSY`), or null. */
export function codeOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : null
}
