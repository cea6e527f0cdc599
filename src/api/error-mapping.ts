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
  const problems = error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message }))
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
