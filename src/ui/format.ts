import type { FieldType } from '../config/index.js'
import { type Clause, type Filter, clausesOf, decimalOf } from '../contract/index.js'
import { revealed } from './reveal.js'

/** Listed values of an `in` clause before "and N more". */
const IN_SHOWN = 12

/** What the pages write for an empty or absent value (here and in `Val`): text that reads as one of them is not shown bare. */
const EMPTY_MARKS: ReadonlySet<string> = new Set(['(empty)', '"" (empty text)', '(none)', 'empty', 'none', '(absent)', 'absent'])
/** The quoted form below, so text that already reads like it is quoted in turn. */
const QUOTED_TEXT = /^".*" \(text\)$/
/** Text that reads as a value of another kind: a number in any spelling, a boolean, an object or a list. */
const OTHER_KIND = /^(?:[+-]?(?:Infinity|NaN)|true|false|null)$|^[[{]/

/** A field's declared type where the page knows it: a number field may hold its exact digits as text. */
export type FieldTypes = Readonly<Record<string, FieldType>>

/**
 * Text as a reviewer reads it: revealed, and quoted when it would read as an empty value's mark, as a value of
 * another kind, as a list, or holds the change arrow. Otherwise an agent's reason '"" (empty text)' reads exactly
 * as the plan that clears the field, an owner "empty" as no owner, a reason "ok, collection → active" as a change
 * of another field in the glance, the text "100" as the number 100 (a filter on it matches no number), and the one
 * tag "a, b" as the two tags a and b (", " is what separates a list's values).
 */
function textValue(text: string): string {
  const shown = revealed(text)
  const quoted =
    EMPTY_MARKS.has(shown) || QUOTED_TEXT.test(shown) || shown.includes('→') || shown.includes(', ') || OTHER_KIND.test(shown) || decimalOf(shown) !== null
  return quoted ? `${JSON.stringify(shown)} (text)` : shown
}

/**
 * A value as a reviewer reads it. `type`, the field's declared type where known: a number or integer field
 * holding a decimal as text holds the number itself, its exact digits (a 64-bit integer, a numeric(40, 2) the sql
 * connector keeps as read, since a double would round it), so it is shown as that number, unquoted.
 * Absent (`undefined`, a field the upstream's answer did not carry) and empty (null) read differently.
 */
export function scalarText(value: unknown, type?: FieldType): string {
  if (value === undefined) return '(absent)'
  if (value === null) return '(empty)'
  if (value === '') return '"" (empty text)'
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.map((v) => scalarText(v)).join(', ')
  if (typeof value === 'object') return revealed(JSON.stringify(value))
  if (typeof value === 'string' && (type === 'number' || type === 'integer') && decimalOf(value) !== null && value.trim() === value) return value
  return typeof value === 'string' ? textValue(value) : revealed(String(value))
}

/**
 * A resource's id field and its declared type. Ids are strings in Warrant's contract (a compensation's selector is
 * `id in ["7", "8"]`); an id field declared `integer` or `number` holds them as its digits, shown as that number, not
 * as the text `"7" (text)`, which reads as a string column.
 */
export interface IdField {
  readonly field: string
  readonly type: FieldType | undefined
}

/** One clause in words: "status is past_due", "tags contain disputed", "amount_due is at least 100"; `id`, the resource's id field where the page knows it. */
export function clauseText(c: Clause, id?: IdField): string {
  const v = c.value
  // only the id field's type: any other field's text "100" is a filter that matches no number, and is shown as text
  const valueText = (x: unknown) => scalarText(x, id !== undefined && c.field === id.field ? id.type : undefined)
  switch (c.op) {
    case 'eq':
      return `${c.field} is ${valueText(v)}`
    case 'in':
    case 'not_in': {
      const list = v as readonly unknown[]
      const shown = list.slice(0, IN_SHOWN).map(valueText).join(', ')
      const more = list.length > IN_SHOWN ? ` and ${(list.length - IN_SHOWN).toLocaleString('en-US')} more` : ''
      return list.length === 1
        ? `${c.field} ${c.op === 'in' ? 'is' : 'is not'} ${shown}`
        : `${c.field} is ${c.op === 'in' ? 'one of' : 'none of'} ${shown}${more} (${list.length.toLocaleString('en-US')} values)`
    }
    case 'lt':
      return `${c.field} is below ${valueText(v)}`
    case 'lte':
      return `${c.field} is at most ${valueText(v)}`
    case 'gt':
      return `${c.field} is above ${valueText(v)}`
    case 'gte':
      return `${c.field} is at least ${valueText(v)}`
    case 'is_null':
      return v ? `${c.field} is empty` : `${c.field} is set`
    case 'contains':
      return `${c.field} contain ${valueText(v)}`
  }
}

/** Every clause of a filter in words; an empty filter matches every record. */
export function filterClauses(filter: Filter, id?: IdField): string[] {
  return clausesOf(filter).map((c) => clauseText(c, id))
}

/** A filter as one phrase: "status is past_due and region is eu". */
export function filterText(filter: Filter, id?: IdField): string {
  const clauses = filterClauses(filter, id)
  return clauses.length === 0 ? 'every record (no condition)' : clauses.join(' and ')
}

export const count = (n: number) => n.toLocaleString('en-US')
export const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`

/** "in 27 min", "in 2 h 5 min", "14 s ago", from `now`: the gateway's clock (`Viewer.now`), not the wall's. */
export function relative(iso: string | null | undefined, now: number): string {
  if (!iso) return 'never'
  const ms = Date.parse(iso) - now
  const abs = Math.abs(ms)
  let text: string
  if (abs < 60_000) text = `${Math.round(abs / 1000)} s`
  else if (abs < 3_600_000) text = `${Math.round(abs / 60_000)} min`
  else if (abs < 86_400_000) text = `${Math.floor(abs / 3_600_000)} h ${Math.round((abs % 3_600_000) / 60_000)} min`
  else text = `${Math.round(abs / 86_400_000)} days`
  return ms >= 0 ? `in ${text}` : `${text} ago`
}

/** "2025-03-08 14:16:02 UTC": one fixed form, never the viewer's guess of a time zone. */
export function utc(iso: string | null | undefined): string {
  if (!iso) return '—'
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`
}

/** A digest shortened for reading; the full value stays in the title and the forms. */
export function shortDigest(digest: string): string {
  const [algo, hex] = digest.includes(':') ? digest.split(':', 2) : ['', digest]
  return `${algo ? `${algo}:` : ''}${(hex ?? '').slice(0, 12)}…`
}

/** The words that make an environment's name read as production. */
const PRODUCTION_WORDS: ReadonlySet<string> = new Set(['prod', 'production', 'prd', 'live'])

/**
 * Whether the environment's name reads like production (it then gets the loudest banner): one of its words is
 * prod, production, prd or live, whatever separates the words: a hyphen, an underscore, a dot, a digit or a
 * capital (billing-prod, billing_prod, PROD_EU, prod2, billingProd). A word boundary alone counts `_` and digits
 * as part of a word, so billing_prod and prod2 read as staging.
 */
export function looksLikeProduction(environment: string): boolean {
  const words = environment.replace(/([a-z])([A-Z])/g, '$1 $2').split(/[^A-Za-z]+/)
  return words.some((w) => PRODUCTION_WORDS.has(w.toLowerCase()))
}
