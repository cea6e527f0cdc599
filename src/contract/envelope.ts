import { z } from 'zod'
import { CONTINUATION_KINDS, REASON_CODES, STABILITY_KINDS, WARNING_CODES } from './codes.js'

export const reasonCodeSchema = z.enum(REASON_CODES)
export const warningCodeSchema = z.enum(WARNING_CODES)
export const continuationKindSchema = z.enum(CONTINUATION_KINDS)

/** One reason the collection does not cover its scope, with the details a client needs to recover. */
export const incompleteReasonSchema = z
  .object({
    code: reasonCodeSchema,
    message: z.string(),
    source: z.string().optional().describe('the source (shard, tenant, region) this reason is about'),
    limit: z
      .object({ name: z.string(), value: z.number() })
      .optional()
      .describe('the limit that stopped the walk, e.g. {name: "max_pages", value: 1}'),
    retry_after_seconds: z
      .number()
      .optional()
      .describe(
        'seconds to wait before trying again; on SOURCE_UNAVAILABLE its presence means the failure may clear with time ' +
          '(a 5xx, a timeout), its absence that it is permanent (the same request would fail the same way)',
      ),
    upstream_status: z.number().int().optional(),
    fields: z
      .array(z.string())
      .optional()
      .describe('for SHAPE_MISMATCH: the declared fields records lacked (or carried with another type)'),
    record_count: z.number().int().nonnegative().optional().describe('for SHAPE_MISMATCH: how many records could not be judged'),
  })
  .meta({ id: 'IncompleteReason' })
export type IncompleteReason = z.infer<typeof incompleteReasonSchema>

export const warningSchema = z
  .object({
    code: warningCodeSchema,
    message: z.string(),
    source: z.string().optional(),
    fields: z
      .array(z.object({ field: z.string(), reason: z.string() }))
      .optional()
      .describe('for PARTIAL_FIELD_SET: each omitted field and why'),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'Warning' })
export type Warning = z.infer<typeof warningSchema>

/** A real recovery path. `cursor` values are opaque and signed: never invent or edit one. */
export const continuationSchema = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('next_cursor'), cursor: z.string() }),
    z.object({
      kind: z.literal('retry_after'),
      retry_after_seconds: z.number(),
      not_before: z.string(),
      cursor: z.string().optional().describe('resume the same walk after the wait'),
    }),
    z.object({
      kind: z.literal('narrow_query'),
      message: z.string(),
      suggestion: z.record(z.string(), z.unknown()).optional(),
    }),
    z.object({
      kind: z.literal('retry_with_deadline'),
      minimum_deadline_ms: z.number(),
      cursor: z.string().optional().describe('resume the same walk with a longer deadline'),
    }),
  ])
  .meta({ id: 'Continuation' })
export type Continuation = z.infer<typeof continuationSchema>

export const scopeSchema = z
  .object({
    resource: z.string(),
    environment: z.string(),
    visibility: z.string().describe('what the credential can see'),
    snapshot: z.string().nullable().describe('identifier or upper bound of the snapshot the walk read'),
    consistent_snapshot: z.boolean(),
    stability: z
      .enum(STABILITY_KINDS)
      .optional()
      .describe(
        'how the walk knows the data held still: "snapshot" (one consistent snapshot), "proven" (no snapshot, but every page ' +
          'started strictly after the last key read, or re-read the previous page\'s last record and found it in place, so every record ' +
          'that existed for the whole walk was read), "unproven" (neither: absence cannot be proven). Absent means "unproven" ' +
          'unless consistent_snapshot is true',
      ),
    sources: z.array(z.string()).optional(),
  })
  .meta({ id: 'Scope' })
export type Scope = z.infer<typeof scopeSchema>

export const pageSchema = z
  .object({
    returned: z.number().int().nonnegative(),
    requested_size: z.number().int().nonnegative(),
    ordering: z.string(),
    pages_read: z.number().int().nonnegative().optional(),
    walk_returned: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('on a continued walk: the records every part of the walk has returned, this one included (`returned` counts this part only)'),
  })
  .meta({ id: 'Page' })
export type Page = z.infer<typeof pageSchema>

const envelopeShape = <T extends z.ZodType>(item: T) =>
  z.object({
    status: z.enum(['complete', 'partial']).describe('never "success" for partial data'),
    items: z.array(item),
    complete: z.boolean().describe('the decision field: an empty list proves absence only when this is true'),
    truncated: z.boolean().describe('a limit cut the result short'),
    incomplete_reasons: z.array(incompleteReasonSchema),
    continuation: continuationSchema.nullable(),
    scope: scopeSchema,
    page: pageSchema,
    warnings: z.array(warningSchema),
  })

/** The envelope's own rules, which no producer may break. */
function checkEnvelope(value: { status: string; complete: boolean; incomplete_reasons: readonly unknown[] }, ctx: z.RefinementCtx) {
  if (value.complete !== (value.status === 'complete'))
    ctx.addIssue({ code: 'custom', path: ['status'], message: 'status must be "complete" exactly when complete is true' })
  if (value.complete && value.incomplete_reasons.length > 0)
    ctx.addIssue({ code: 'custom', path: ['incomplete_reasons'], message: 'a complete result has no incomplete reasons' })
  if (!value.complete && value.incomplete_reasons.length === 0)
    ctx.addIssue({ code: 'custom', path: ['incomplete_reasons'], message: 'a partial result names at least one reason' })
}

/**
 * The envelope for items of a given shape.
 *
 * @example const accounts = envelopeOf(z.object({ id: z.string() }))
 */
export function envelopeOf<T extends z.ZodType>(item: T) {
  return envelopeShape(item).superRefine(checkEnvelope)
}

/** The envelope with items of any shape: one shape for every collection, on every surface. */
export const envelopeSchema = envelopeOf(z.record(z.string(), z.unknown())).meta({ id: 'Envelope' })

export type Envelope<T = Record<string, unknown>> = {
  readonly status: 'complete' | 'partial'
  readonly items: readonly T[]
  readonly complete: boolean
  readonly truncated: boolean
  readonly incomplete_reasons: readonly IncompleteReason[]
  readonly continuation: Continuation | null
  readonly scope: Scope
  readonly page: Page
  readonly warnings: readonly Warning[]
}

/** The envelope as JSON Schema (draft 2020-12), for MCP `outputSchema` and OpenAPI. */
export function envelopeJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(envelopeSchema, { target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>
}
