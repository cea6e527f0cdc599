import { z } from 'zod'

/** What every refusal of a `cursor` that is no cursor says: how to start, and what a null next_cursor means. */
export const CURSOR_RULE = 'leave cursor out to start from the beginning; otherwise pass a cursor an earlier answer gave, unchanged. A null next_cursor, or no continuation, means nothing follows'

/**
 * The `cursor` argument of every paged read (search, a selection's records or excluded records, a plan's changes,
 * an operation's results), over HTTP and MCP alike: a cursor an earlier answer gave, or absent (the first part or
 * page). `null` and `""` are refused, naming the rule: taken as "from the start" they answered a last page's
 * `next_cursor: null`, passed on, with the first page again, and an agent looped.
 *
 * @example z.strictObject({ cursor: cursorArgument(4096).optional() })
 */
export function cursorArgument(maxChars: number) {
  return z
    .string({ error: (issue) => (issue.input === null ? `null is not a cursor: ${CURSOR_RULE}` : undefined) })
    .min(1, `an empty cursor is no cursor: ${CURSOR_RULE}`)
    .max(maxChars)
}
