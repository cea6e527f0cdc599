import { z } from 'zod'

/** The most field names one `fields` list may hold (search, a selection, one record). */
export const MAX_FIELD_NAMES = 200

const fieldName = z.string().min(1, 'an empty field name names no field')

/** Refuses a list naming a field twice, naming the field (a list is of distinct fields: its order is the answer's). */
function once(names: readonly string[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>()
  for (const name of names) {
    if (seen.has(name)) {
      ctx.addIssue({ code: 'custom', message: `field "${name}" is named twice; name each field once` })
      return
    }
    seen.add(name)
  }
}

/**
 * The `fields` argument of a search or a selection, on every surface (HTTP body, MCP tool input, CLI flags): review
 * field names, each once and none empty. A name twice was taken as it came (a selection froze it so); it is refused.
 *
 * @example z.strictObject({ fields: fieldList().optional().describe('review fields to return; default all') })
 */
export function fieldList() {
  return z.array(fieldName).min(1).max(MAX_FIELD_NAMES).superRefine(once)
}

/**
 * The same list as a query parameter (`?fields=status,region`): comma-separated names, trimmed, each once and none
 * empty (`?fields=` and `?fields=a,,b` were read as fewer fields, `?fields=` as none at all).
 */
export function fieldListText() {
  return z
    .string()
    .transform((text) => text.split(',').map((name) => name.trim()))
    .superRefine((names, ctx) => {
      if (names.some((name) => name === '')) ctx.addIssue({ code: 'custom', message: 'an empty field name names no field; list field names separated by commas, or leave fields out for all review fields' })
      else if (names.length > MAX_FIELD_NAMES) ctx.addIssue({ code: 'custom', message: `at most ${MAX_FIELD_NAMES} field names` })
      else once(names, ctx)
    })
}
