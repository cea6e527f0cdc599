import type { HttpConnectorConfig } from '../../config/schema.js'

/**
 * Where a 2xx JSON answer says of itself that the request failed: `{"items": [], "error": "timed out"}`, Slack's
 * `ok: false`, JSend's `status: "error"` or `"fail"`, an HTTP error status echoed (`status: 500`, `statusCode:
 * 503`), GraphQL's partial answer with `errors` beside its data.
 * Read as a page, the items beside such a member are what the upstream managed, not the list: an empty array
 * there was taken for the list's end. Only the answer's top-level members count, by these names; a member that
 * says all is well (`error: null`, `""`, `{}` or `false`, `errors: []`, `ok: true`) is none, and so is one under a
 * path the config reads (`read`: the items, a paging signal).
 *
 * @example errorInBody({ items: [], error: 'timed out' }) // '"error" holds a message'
 */
export function errorInBody(payload: unknown, read: readonly string[] = []): string | null {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return null
  // a member the config reads (items_path "errors", a flag at "ok") is what the config says it is
  const taken = new Set(read.map((path) => path.split('.')[0]))
  const body = Object.fromEntries(Object.entries(payload).filter(([key]) => !taken.has(key)))
  const said: string[] = []
  const errors = body.errors
  if (Array.isArray(errors) ? errors.length > 0 : filled(errors)) said.push(`"errors" holds ${Array.isArray(errors) ? `${errors.length} error(s)` : 'an error'}`)
  if (filled(body.error)) said.push(`"error" holds ${typeof body.error === 'string' ? 'a message' : 'an error'}`)
  for (const flag of ['ok', 'success'] as const) if (body[flag] === false) said.push(`"${flag}" is false`)
  if (typeof body.status === 'string' && FAILED_STATUS.has(body.status.trim().toLowerCase())) said.push(`"status" is "${body.status.trim()}"`)
  // an HTTP error status echoed in the envelope (`{"status": 500, "message": …}`, API Gateway's `statusCode`)
  for (const key of ['status', 'statusCode'] as const) {
    const code = body[key]
    if (typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599) said.push(`"${key}" is ${code}`)
  }
  return said.length === 0 ? null : said.join(', ')
}

/** `status` values that mean the request failed (JSend's `error` and `fail`, and their common spellings). */
const FAILED_STATUS: ReadonlySet<string> = new Set(['error', 'fail', 'failed', 'failure'])

/** A member that says something: not null, false, "", an empty object or array. */
function filled(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === '') return false
  if (typeof value === 'object') return Object.keys(value).length > 0
  return true
}

/** The paths a list answer is read at, and the members it names as notices: what the config says they are, never an error flag. */
export function readPaths(list: HttpConnectorConfig['list']): string[] {
  const pagination = list.pagination
  const cursor = pagination.style === 'cursor' ? pagination.next_cursor_path : pagination.style === 'next_link' ? pagination.path : undefined
  // members the config names as notices (`notice_members`) are read as the config says too: never as a failure
  return [list.items_path, list.has_more_path, list.total_path, list.incomplete_flag?.path, list.failed_parts?.path, list.failed_parts?.total_path, cursor, ...list.notice_members].filter(
    (p): p is string => p !== undefined && p !== '',
  )
}
