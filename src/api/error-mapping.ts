import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { WarrantError } from '../contract/index.js'
import type { Logger } from '../gateway/index.js'

export const errorBodySchema = z
  .object({
    error: z.object({
      code: z.string().describe('stable error code, e.g. denied_field, digest_mismatch'),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .meta({ id: 'Error' })

/** A zod failure as `invalid_request`, naming each path that is wrong. */
export function fromZodError(error: z.ZodError, where = 'request'): WarrantError {
  const problems = error.issues.flatMap((i) => problemsOf(i, [])).map((p) => ({ path: p.path.join('.') || '(root)', message: p.message }))
  return new WarrantError('invalid_request', `invalid ${where}: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`, { problems })
}

type Issue = z.core.$ZodIssue
type Problem = { path: PropertyKey[]; message: string }

/**
 * An issue as the caller can act on it. A failed union says only "Invalid input": its problem is in the member
 * whose shape the value has (a filter condition that is an object fails inside its operators, e.g.
 * `filter.id.in` holding too many values), so that member's issues are given at their paths; a value of no
 * member's shape is told the shapes accepted.
 */
function problemsOf(issue: Issue, at: PropertyKey[]): Problem[] {
  const path = [...at, ...issue.path]
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [{ path, message: issue.message }]
  const shaped = issue.errors.find((branch) => !branch.every(wrongShape))
  if (shaped) return shaped.flatMap((i) => problemsOf(i, path))
  const expected = [...new Set(issue.errors.flat().flatMap(expectedShapes))]
  const received = issue.errors.flat().map((i) => /received (\w+)/.exec(i.message)?.[1]).find(Boolean)
  const list = expected.length > 1 ? `${expected.slice(0, -1).join(', ')} or ${expected.at(-1)}` : (expected[0] ?? 'another shape')
  return [{ path, message: `Invalid input: expected ${list}${received ? `, received ${received}` : ''}` }]
}

/** The issue says only that the value is not of a member's type (at the member's root). */
function wrongShape(issue: Issue): boolean {
  if (issue.path.length > 0) return false
  if (issue.code === 'invalid_type') return true
  return issue.code === 'invalid_union' && issue.errors.every((branch) => branch.every(wrongShape))
}

function expectedShapes(issue: Issue): string[] {
  if (issue.code === 'invalid_type') return [issue.expected]
  return issue.code === 'invalid_union' ? issue.errors.flat().flatMap(expectedShapes) : []
}

/**
 * The one place an HTTP response gets its status from an error. Unknown failures are logged with an id and
 * become 500 `internal`; they never get a code that blames the caller.
 */
export function toErrorResponse(error: unknown, c: Context, log: Logger): Response {
  const known = asWarrantError(error)
  if (known) {
    // a refusal that names its wait (a continuation followed before its not_before) says it the HTTP way too
    const wait = (known.details as { retry_after_seconds?: unknown } | undefined)?.retry_after_seconds
    if (known.status === 429 && typeof wait === 'number') c.header('Retry-After', String(Math.ceil(wait)))
    return c.json(known.toBody(), known.status as 400)
  }
  const id = randomUUID()
  log.error({ err: error, error_id: id, path: c.req.path }, 'internal error')
  return c.json({ error: { code: 'internal', message: `internal error ${id}; it was logged`, details: { error_id: id } } }, 500)
}

export function asWarrantError(error: unknown): WarrantError | null {
  if (error instanceof WarrantError) return error
  if (error instanceof z.ZodError) return fromZodError(error)
  if (error instanceof HTTPException && error.status < 500) {
    const message = error.message || 'bad request'
    if (error.status === 400) return new WarrantError('invalid_request', /json/i.test(message) ? `malformed JSON body: ${message}` : message)
    if (error.status === 401) return new WarrantError('unauthenticated', message)
    if (error.status === 404) return new WarrantError('not_found', message)
    // every /v1 body is declared JSON only: the route's media-type gate answers 415 with no word of what to send
    if (error.status === 415)
      return new WarrantError('invalid_request', 'the request body must be JSON, sent with Content-Type: application/json; this request was sent with another Content-Type or none', {
        field: 'content-type',
      })
    return new WarrantError('invalid_request', message)
  }
  return null
}
