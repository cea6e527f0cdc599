import { isDeepStrictEqual } from 'node:util'
import { type FieldCondition, type Filter, WarrantError, isReservedKey } from '../contract/index.js'
import { decimalArgument } from './option-values.js'
import type { ResourceConfig } from '../config/index.js'

/** The `--filter` term grammar, printed with every refusal so a typo is answered with what is accepted. */
export const FILTER_TERM_GRAMMAR =
  'a term is FIELD OP VALUE with OP one of: = (equals; a,b any of, \\, a comma inside a value; =null is null), != (none of; !=null not null), < <= > >=, ~ (the list field contains); repeated terms on one field must all hold'

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*/
const OPERATORS = ['!=', '<=', '>=', '=', '<', '>', '~'] as const
type TermOperator = (typeof OPERATORS)[number]
/** Characters that can only be part of an operator: a value starting with one is a mistyped operator (`==`, `=>`). */
const OPERATOR_CHARS = /^[=<>!~]/

/**
 * Turns CLI `--filter` terms into a filter, typed by the resource's declared fields.
 * `k=v` equality (`k=a,b` any of), `k!=a,b` none of, `k<v` `k<=v` `k>v` `k>=v`, `k~tag` tags contain,
 * `k=null` / `k!=null` null tests. Terms on one field all hold (`amount>=10 amount<100`); two terms that one
 * condition cannot hold together (`status=a status=b`) are refused, never reduced to the last.
 *
 * @example parseFilterTerms(['status=past_due', 'region=eu', 'amount_due>=100'], resource)
 */
export function parseFilterTerms(terms: readonly string[], resource: ResourceConfig): Filter {
  // No prototype: `--filter __proto__=x` must never reach Object.prototype (it is refused below anyway)
  const filter = Object.create(null) as Record<string, Record<string, unknown>>
  const origin = Object.create(null) as Record<string, Record<string, string>>
  for (const term of terms) {
    const { field, op, raw } = readTerm(term)
    if (isReservedKey(field)) throw new WarrantError('invalid_request', `"${field}" is a reserved name, never a field name`, { field })
    const type = Object.hasOwn(resource.fields, field) ? resource.fields[field] : undefined
    const value = (text: string) => coerce(text, type, term)
    const [key, next] = conditionOf(op, raw, value, (items) => listItems(items, type, term))
    const cond = (filter[field] ??= {})
    const from = (origin[field] ??= {})
    if (key in cond) cond[key] = combine(field, key, cond[key], next, from[key]!, term)
    else cond[key] = next
    from[key] ??= term
  }
  return { ...filter } as Record<string, FieldCondition>
}

function readTerm(term: string): { field: string; op: TermOperator; raw: string } {
  const field = FIELD.exec(term.trimStart())?.[0]
  const refuse = (what: string) => new WarrantError('invalid_request', `cannot read filter "${term}": ${what}. ${FILTER_TERM_GRAMMAR}`, { filter: term })
  if (!field) throw refuse('it must start with a field name')
  const rest = term.trimStart().slice(field.length).trimStart()
  const op = OPERATORS.find((o) => rest.startsWith(o))
  if (!op) throw refuse(`no operator after "${field}"`)
  const raw = rest.slice(op.length)
  const extra = OPERATOR_CHARS.exec(raw.trimStart())
  if (extra) {
    const typed = op + (/^[=<>!~]+/.exec(raw.trimStart())?.[0] ?? '')
    throw refuse(`"${typed}" is not an operator`)
  }
  if (raw.trim() === '') throw refuse(`no value after "${field}${op}"`)
  return { field, op, raw: op === '~' ? raw.trim() : raw }
}

function conditionOf(op: TermOperator, raw: string, value: (text: string) => string | number | boolean, items: (raw: string) => string[]): [string, unknown] {
  if (raw === 'null' && (op === '=' || op === '!=')) return ['is_null', op === '=']
  if (op === '=') {
    const parts = items(raw)
    return parts.length > 1 ? ['in', parts.map(value)] : ['eq', value(parts[0]!)]
  }
  if (op === '!=') return ['not_in', items(raw).map(value)]
  if (op === '~') return ['contains', raw]
  return [{ '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' }[op], value(raw)]
}

/**
 * Two terms on one field with the same operator: kept when they say the same, `!=` lists joined (a record must
 * differ from all), anything else refused: a single condition cannot hold both, and keeping one would answer
 * another question than the one asked.
 */
function combine(field: string, key: string, previous: unknown, next: unknown, first: string, term: string): unknown {
  if (isDeepStrictEqual(previous, next)) return previous
  if (key === 'not_in') return [...new Set([...(previous as unknown[]), ...(next as unknown[])])]
  const hint = key === 'eq' || key === 'in' ? ` (for either value, write one term: ${field}=A,B)` : ''
  throw new WarrantError(
    'invalid_request',
    `filter terms "${first}" and "${term}" both constrain ${field} and cannot both be kept${hint}; every term on a field must hold. ${FILTER_TERM_GRAMMAR}`,
    { filter: [first, term] },
  )
}

/**
 * The values of `a,b` (`\\,` a comma inside one). An item that is empty, or a text item with a space at either end,
 * is refused: `customer_name=Acme, Inc` read as "Acme" or " Inc" answered a complete "nothing matched, that proves
 * absence" over a table holding Acme, Inc.
 */
function listItems(raw: string, type: string | undefined, term: string): string[] {
  const items = raw.split(/(?<!\\),/).map((item) => item.replaceAll('\\,', ','))
  if (items.length === 1) return items
  const refuse = (what: string) =>
    new WarrantError('invalid_request', `cannot read filter "${term}": ${what}; a comma separates values (any of): for a comma inside a value write \\, and for a list write a,b without spaces`, { filter: term })
  if (items.some((item) => item.trim() === '')) throw refuse('the list has an empty value')
  const text = type !== 'number' && type !== 'integer' && type !== 'boolean'
  const spaced = text ? items.find((item) => item !== item.trim()) : undefined
  if (spaced !== undefined) throw refuse(`"${spaced}" has a space at its ${spaced.trimStart() === spaced ? 'end' : 'start'}`)
  return items
}

function coerce(text: string, type: string | undefined, term: string): string | number | boolean {
  if (type === 'number' || type === 'integer') {
    // a rounded or reinterpreted bound ("0x10" as 16) asks about another value than the one written
    const read = decimalArgument(text)
    if ('problem' in read) throw new WarrantError('invalid_request', `cannot read filter "${term}": "${text}" ${read.problem}`, { filter: term })
    return read.value
  }
  if (type === 'boolean') {
    if (text !== 'true' && text !== 'false') throw new WarrantError('invalid_request', `cannot read filter "${term}": "${text}" is not true or false`, { filter: term })
    return text === 'true'
  }
  // spaces before the operator are skipped, so `status = past_due` read " past_due" and answered a complete
  // "nothing matched, that proves absence": a text value is compared as written, so an end space is refused
  if (text !== text.trim())
    throw new WarrantError(
      'invalid_request',
      `cannot read filter "${term}": "${text}" has a space at its ${text.trimStart() === text ? 'end' : 'start'}; a text value is compared as written, so write FIELD=VALUE with no space after the operator (a value whose ends are spaces is searched over HTTP or MCP)`,
      { filter: term },
    )
  return text
}
