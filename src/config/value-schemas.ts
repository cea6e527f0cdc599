import { z } from 'zod'

// The value shapes the config's sections share: a field name, a secret reference, a duration, a template value,
// a dotted JSON path, a field type.

export const fieldName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'a field name (letters, digits, _)')
export const secretRef = z
  .union([z.strictObject({ env: z.string().min(1) }), z.strictObject({ file: z.string().min(1) })], {
    // zod's own "Invalid input" does not say what to write; this message never quotes the value (it may be the secret)
    error: 'write where the secret lives, { env: NAME } or { file: PATH }, never the secret itself',
  })
  .describe('where the secret lives: an environment variable or a secret file; never the secret itself')

export const fieldTypeSchema = z.enum(['string', 'number', 'integer', 'boolean', 'tags', 'timestamp'])
export type FieldType = z.infer<typeof fieldTypeSchema>

/** A timeout in ms: past 2^31-1 node fires a timer after 1 ms, so an hour is the ceiling. */
export const durationMs = z.number().int().positive().max(3_600_000, 'at most 3600000 (an hour, in milliseconds)')

/** A ttl in minutes: at most a year, so every expiry is a date (now + 1e12 minutes is none: RangeError mid-request). */
export const ttlMinutes = z.number().positive().max(525_600, 'at most 525600 (a year, in minutes)')

export const templateValue: z.ZodType<unknown> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(templateValue), z.record(z.string(), templateValue)]),
)

/** A dotted path into JSON (`meta.total`, `doc.state`, `0.id`): segments of anything but dots, none empty. */
export const dottedPath = z.string().regex(/^[^.]+(\.[^.]+)*$/, 'a dotted path such as "doc.state" (no empty segment)')
