import { z } from 'zod'
import { compareDecimals } from './decimal.js'
import { instantOf } from './instant.js'

/**
 * The longest text a filter compares: no field a filter reads holds a megabyte, and a value goes upstream whole on
 * every page of a walk (an http upstream's query string, a SQL parameter). 1 MB values were walked and answered
 * "complete, none match".
 */
export const MAX_FILTER_VALUE_CHARS = 2048

const scalar = z.union([z.string(), z.number(), z.boolean()])

/** The JSON filter grammar, quoted by every refusal of a filter so a typo is answered with what is accepted. */
export const FILTER_GRAMMAR =
  'a filter maps each field to a value (equals) or to an object of operators that must all hold: eq, in, not_in, lt, lte, gt, gte, is_null, contains; each field and each operator at most once; values of the field\'s type (a timestamp as ISO-8601 with Z or an offset, or YYYY-MM-DD)'

/** How a request's filter is described to agents (OpenAPI, MCP tool schemas). */
export const FILTER_DESCRIPTION = 'field → value or {operator: value}; all must hold; {} matches all; timestamps as ISO-8601 with Z or an offset (2024-06-01T12:00:00Z), or a date (2024-06-01, midnight UTC)'

/**
 * One field's condition. A bare scalar means equality. Operators compose with AND.
 *
 * @example { status: 'past_due', amount_due: { gte: 100 }, tags: { contains: 'disputed' }, owner: { is_null: true } }
 */
export const fieldConditionSchema = z.union([
  scalar,
  z
    .strictObject({
      eq: scalar.optional().describe('equals'),
      in: z.array(scalar).min(1).max(10_000).optional().describe('one of'),
      not_in: z.array(scalar).min(1).max(10_000).optional().describe('none of'),
      lt: scalar.optional().describe('<'),
      lte: scalar.optional().describe('<='),
      gt: scalar.optional().describe('>'),
      gte: scalar.optional().describe('>='),
      is_null: z.boolean().optional().describe('true: empty; false: set'),
      contains: z.string().optional().describe('the list field has this value'),
    }, { error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown operator ${issue.keys.map((k) => `"${k}"`).join(', ')}: ${FILTER_GRAMMAR}` : undefined) })
    .refine((c) => Object.values(c).some((v) => v !== undefined), { message: `a condition needs at least one operator: ${FILTER_GRAMMAR}` }),
])
export type FieldCondition = z.infer<typeof fieldConditionSchema>

/**
 * Names no field may have: `__proto__` (a JSON object's own key that any plain-object copy silently turns into
 * its prototype, dropping the condition) and every name a plain object inherits (`constructor`, `toString`…),
 * which lookups by name would find on any object. Refused with `invalid_request` wherever a key names a field.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'prototype', ...Object.getOwnPropertyNames(Object.prototype)])

export function isReservedKey(key: string): boolean {
  return RESERVED_KEYS.has(key)
}

const filterKey = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'a field name')
  .refine((key) => !RESERVED_KEYS.has(key), { message: 'a reserved name (__proto__, constructor, toString…) is never a field name' })

/** A filter: field name → condition; all conditions must hold. `{}` matches every record. */
export const filterSchema = z.record(filterKey, fieldConditionSchema).superRefine(refuseLongValues).meta({ id: 'Filter' })

/**
 * Each text value at most {@link MAX_FILTER_VALUE_CHARS}, named by its path (`customer_name.in.1`). A refinement,
 * not a `maxLength` on every value of the grammar: that would be advertised in each tool's input schema, paid in
 * every agent's context before its first call.
 */
function refuseLongValues(filter: Record<string, FieldCondition>, ctx: z.RefinementCtx): void {
  const check = (value: unknown, path: (string | number)[]) => {
    if (typeof value === 'string' && value.length > MAX_FILTER_VALUE_CHARS)
      ctx.addIssue({ code: 'custom', path, message: `a filter value is at most ${MAX_FILTER_VALUE_CHARS} characters, and this one has ${value.length}` })
  }
  for (const [field, condition] of Object.entries(filter)) {
    if (typeof condition !== 'object') check(condition, [field])
    else
      for (const [op, value] of Object.entries(condition)) {
        if (Array.isArray(value)) value.forEach((item, i) => check(item, [field, op, i]))
        else check(value, [field, op])
      }
  }
}
export type Filter = z.infer<typeof filterSchema>

/** The fields a filter reads, to check them against a resource's allowed and denied fields. */
export function filterFields(filter: Filter): string[] {
  return Object.keys(filter)
}

/** Normalised conditions: every operator explicit. */
export type Operator = 'eq' | 'in' | 'not_in' | 'lt' | 'lte' | 'gt' | 'gte' | 'is_null' | 'contains'
export interface Clause {
  readonly field: string
  readonly op: Operator
  readonly value: string | number | boolean | readonly (string | number | boolean)[]
}

/** Flattens a filter into clauses, one per operator, in a deterministic order. */
export function clausesOf(filter: Filter): Clause[] {
  const clauses: Clause[] = []
  for (const field of Object.keys(filter).sort()) {
    const cond = filter[field]!
    if (typeof cond !== 'object') {
      clauses.push({ field, op: 'eq', value: cond })
      continue
    }
    for (const op of ['eq', 'in', 'not_in', 'lt', 'lte', 'gt', 'gte', 'is_null', 'contains'] as const) {
      const value = cond[op]
      if (value !== undefined) clauses.push({ field, op, value })
    }
  }
  return clauses
}

/**
 * Evaluates a filter against one record in memory: the same semantics the SQL compiler gives, used where an
 * upstream cannot filter (HTTP), for exclusion rules and flags, and to re-check preconditions at write time.
 * `types` are the resource's declared field types. A number field whose value a double would round arrives as
 * its exact digits (a 64-bit integer, a numeric(40, 2) balance); it is compared with the condition's numbers by
 * value, as the engine compares it, never as a string no number equals (which made `{balance: {gte: 1000}}`
 * miss the largest balances). Timestamps compare by the instant they name (`instantOf`), never as text.
 */
export function matchesFilter(record: Readonly<Record<string, unknown>>, filter: Filter, types: FieldTypeNames): boolean {
  return filterMatcher(filter, types)(record)
}

/** Declared field → type name (`number`, `timestamp`…), as in a resource's `fields`. */
export type FieldTypeNames = Readonly<Record<string, string>>

/**
 * `matchesFilter` for one filter and many records: the clauses are flattened once, not per record.
 *
 * @example const matches = filterMatcher({ amount: { gte: 100 } }, resource.fields); records.filter((r) => matches(r.fields))
 */
export function filterMatcher(filter: Filter, types: FieldTypeNames): (record: Readonly<Record<string, unknown>>) => boolean {
  const clauses = clausesOf(filter).map((c) => ({ c, instants: Object.hasOwn(types, c.field) && types[c.field] === 'timestamp' }))
  return (record) => {
    for (const { c, instants } of clauses) if (!(instants ? matchesInstant(record[c.field], c) : matchesClause(record[c.field], c))) return false
    return true
  }
}

function matchesClause(actual: unknown, c: Clause): boolean {
  switch (c.op) {
    case 'eq':
      return same(actual, c.value)
    case 'in':
      return (c.value as readonly unknown[]).some((v) => same(actual, v))
    case 'not_in':
      return actual !== null && actual !== undefined && !(c.value as readonly unknown[]).some((v) => same(actual, v))
    case 'is_null':
      return (actual === null || actual === undefined) === c.value
    case 'contains':
      return Array.isArray(actual) && actual.includes(c.value)
    default:
      return ordered(orderOf(actual, c.value), c.op)
  }
}

/** A clause on a timestamp field: by instant; a value that names none matches nothing but `is_null: false`. */
function matchesInstant(actual: unknown, c: Clause): boolean {
  if (c.op === 'is_null') return (actual === null || actual === undefined) === c.value
  const at = instantOf(actual)
  if (at === null) return false
  const values = (Array.isArray(c.value) ? c.value : [c.value]).map((v) => instantOf(v))
  switch (c.op) {
    case 'eq':
    case 'in':
      return values.includes(at)
    case 'not_in':
      return !values.includes(at)
    case 'contains':
      return false
    default: {
      const bound = values[0]
      return bound !== null && bound !== undefined && ordered(Math.sign(at - bound), c.op)
    }
  }
}

function ordered(order: number | null, op: Operator): boolean {
  if (order === null) return false
  return op === 'lt' ? order < 0 : op === 'lte' ? order <= 0 : op === 'gt' ? order > 0 : order >= 0
}

/**
 * Whether a value read back is the value written, as its field is declared: a timestamp is the same instant
 * in any spelling (PostgreSQL answers 2024-06-01T12:00:00Z as 2024-06-01T12:00:00.000Z), a number the same
 * value whether a number or its exact digits. Other values: false here (the caller compares them as JSON).
 */
export function sameAsDeclared(actual: unknown, expected: unknown, type: string | undefined): boolean {
  if (type === 'timestamp') {
    const at = instantOf(actual)
    return at !== null && at === instantOf(expected)
  }
  if (type === 'number' || type === 'integer') return same(actual, expected) || same(expected, actual)
  return false
}

function same(actual: unknown, value: unknown): boolean {
  if (actual === value) return true
  return typeof actual === 'string' && typeof value === 'number' && compareDecimals(actual, String(value)) === 0
}

/** `actual` against a condition's value: negative, zero or positive; null when the two cannot be ordered. */
function orderOf(actual: unknown, value: unknown): number | null {
  if (actual === null || actual === undefined) return null
  if (typeof actual === 'string' && typeof value === 'number') return compareDecimals(actual, String(value))
  if (typeof actual !== typeof value || (typeof actual !== 'string' && typeof actual !== 'number')) return null
  const a = actual as string | number
  const b = value as string | number
  return a < b ? -1 : a > b ? 1 : a === b ? 0 : null
}

/** Field types whose values have an order (`lt`, `gte`…). */
const ORDERED_TYPES: ReadonlySet<string> = new Set(['string', 'number', 'integer', 'timestamp'])

/**
 * What is wrong with one clause on a field of the declared `type`, or null: `contains` only on tags, tags only
 * with `contains` and `is_null`, order only on ordered types, each value of the field's type. Requests and the
 * config's preconditions, selectors, exclusion rules and flags are held to it alike: a condition of another type
 * than its field would never match in memory (a precondition that skips every target, a flag that flags none).
 */
export function clauseTypeProblem(clause: Clause, type: string): string | null {
  if (clause.op === 'contains' && type !== 'tags') return `"contains" applies to tags fields, and "${clause.field}" is ${type}`
  if (type === 'tags' && clause.op !== 'contains' && clause.op !== 'is_null') return 'a tags field supports only "contains" and "is_null"'
  if (['lt', 'lte', 'gt', 'gte'].includes(clause.op) && !ORDERED_TYPES.has(type)) return `"${clause.op}" needs an ordered field, and "${clause.field}" is ${type}`
  if (clause.op === 'is_null' || clause.op === 'contains') return null
  const values = Array.isArray(clause.value) ? clause.value : [clause.value]
  for (const v of values) if (!fitsType(v, type)) return `value ${JSON.stringify(v)} is not ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`
  if (type === 'timestamp')
    for (const v of values)
      if (instantOf(v, true) === null) return `value ${JSON.stringify(v)} is not an ISO-8601 timestamp (YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or an offset such as +02:00)`
  return null
}

function fitsType(value: unknown, type: string): boolean {
  switch (type) {
    case 'number':
      return typeof value === 'number'
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value)
    case 'boolean':
      return typeof value === 'boolean'
    default:
      return typeof value === 'string'
  }
}
