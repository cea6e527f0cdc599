/**
 * The longest `deadline_ms` a search takes, on every surface (HTTP body, MCP tool input, the CLI's --deadline-ms):
 * a search is a request its client waits on, not a job.
 */
export const SEARCH_MAX_DEADLINE_MS = 300_000

/** The longest `deadline_ms` a selection's walk takes (a selection request, its retry, `warrant select`): an hour. */
export const SELECTION_MAX_DEADLINE_MS = 3_600_000

/**
 * The deadline a walk cut by its own deadline asks for (`retry_with_deadline.minimum_deadline_ms`), or null when
 * none the surface takes can help. The same deadline makes progress when the walk stopped between pages; a page
 * that alone outlasted it needs a longer one (twice it), never more than `maxMs`, the longest the surface that
 * asked takes: an ask above it names a request no client can send.
 *
 * @example retryDeadline(200_000, true, SEARCH_MAX_DEADLINE_MS) // 300000
 * @example retryDeadline(300_000, true, SEARCH_MAX_DEADLINE_MS) // null: narrow the query instead
 */
export function retryDeadline(deadlineMs: number, inFlight: boolean, maxMs: number = Number.POSITIVE_INFINITY): number | null {
  if (!inFlight) return Math.min(deadlineMs, maxMs)
  return deadlineMs >= maxMs ? null : Math.min(deadlineMs * 2, maxMs)
}
