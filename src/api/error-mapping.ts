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
  const problems = problemsOf(error.issues, [])
  return new WarrantError('invalid_request', `invalid ${where}: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`, { problems })
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
    return new WarrantError('invalid_request', message)
  }
  return null
}

type Issue = z.core.$ZodIssue
type Problem = { readonly path: string; readonly message: string }

/**
 * Each issue as a path and a message. A union's failure (a filter condition: a value, or an object of operators)
 * is zod's bare "Invalid input": it is replaced by what the branch the value's type fits says (`in`: too many
 * items), or, when no branch fits, by the types that would.
 */
function problemsOf(issues: readonly Issue[], base: readonly PropertyKey[]): Problem[] {
  return issues.flatMap((issue) => {
    const path = [...base, ...issue.path]
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const fitting = issue.errors.filter((branch) => !branch.every(wrongTypeHere))
      if (fitting.length === 1) return problemsOf(fitting[0]!, path)
      if (fitting.length === 0) {
        const received = issue.errors.flat().map((i) => /received (\w+)/.exec(i.message)?.[1]).find(Boolean)
        const message = `Invalid input: expected ${[...new Set(issue.errors.flatMap(typesExpected))].join(' or ')}${received ? `, received ${received}` : ''}`
        return [{ path: pathText(path), message }]
      }
    }
    return [{ path: pathText(path), message: issue.message }]
  })
}

/** Whether an issue says only that the value at this very place is of another type. */
function wrongTypeHere(issue: Issue): boolean {
  if (issue.path.length > 0) return false
  if (issue.code === 'invalid_type') return true
  return issue.code === 'invalid_union' && issue.errors.every((branch) => branch.every(wrongTypeHere))
}

function typesExpected(branch: readonly Issue[]): string[] {
  return branch.flatMap((i) => (i.code === 'invalid_type' ? [i.expected] : i.code === 'invalid_union' ? i.errors.flatMap(typesExpected) : []))
}

function pathText(path: readonly PropertyKey[]): string {
  return path.map(String).join('.') || '(root)'
}
