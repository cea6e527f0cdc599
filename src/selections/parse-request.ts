import type { z } from 'zod'
import { WarrantError, protoKeyPaths } from '../contract/index.js'

/**
 * Parses a request with its schema; a failure is `invalid_request` naming each path that is wrong, so every
 * surface (HTTP, MCP, CLI) refuses the same input with the same code and words.
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, where = 'request'): z.output<S> {
  // the schema would drop a "__proto__" key without a word (a filter condition under it: a wider selection)
  const reserved = protoKeyPaths(value)
  if (reserved.length > 0)
    throw new WarrantError('invalid_request', `invalid ${where}: ${reserved.join(', ')}: a reserved name, never a field or parameter`, {
      problems: reserved.map((path) => ({ path, message: 'a reserved name, never a field or parameter' })),
    })
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const problems = result.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message }))
  throw new WarrantError('invalid_request', `invalid ${where}: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`, { problems })
}
