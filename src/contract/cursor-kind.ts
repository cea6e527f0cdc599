/**
 * Which of Warrant's cursors a token is shaped like, read from its shape alone: what a refusal names when one tool is
 * handed another's cursor, so the agent is told which cursor it passed rather than that it altered one. Never trusted
 * to follow a cursor: each decoder still verifies its own.
 */
export type CursorKind = 'list_page' | 'results' | 'walk'

/** Each kind in words, as a refusal names it. */
export const CURSOR_KIND_TEXT: Readonly<Record<CursorKind, string>> = {
  list_page: "a page cursor of a frozen list (a selection's records or excluded records, a plan's changes)",
  results: 'an operation\'s results cursor (get_operation, part "results")',
  walk: "a search's continuation",
}

/** A frozen list's page cursor: a position and its signature. */
const LIST_PAGE = /^\d{1,15}\.[A-Za-z0-9_-]{43}$/

export function cursorKindOf(token: string): CursorKind | null {
  if (LIST_PAGE.test(token)) return 'list_page'
  const [payload, signature, extra] = token.split('.')
  if (!payload || !signature || extra !== undefined) return null
  let decoded: unknown
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) return null
  const members = decoded as Record<string, unknown>
  if (typeof members.o === 'string' && 'a' in members) return 'results'
  if ('fp' in members && 'src' in members) return 'walk'
  return null
}
