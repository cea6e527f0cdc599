import { type FieldCondition, type Filter, WarrantError } from '../contract/index.js'
import type { ResourceConfig } from '../config/index.js'

const PATTERN = /^([A-Za-z_][A-Za-z0-9_]*)\s*(!=|<=|>=|=|<|>|~)\s*(.*)$/s

/**
 * Turns CLI `--filter` terms into a filter, typed by the resource's declared fields.
 * `k=v` equality (`k=a,b` any of), `k!=a,b` none of, `k<v` `k<=v` `k>v` `k>=v`, `k~tag` tags contain,
 * `k=null` / `k!=null` null tests.
 *
 * @example parseFilterTerms(['status=past_due', 'region=eu', 'amount_due>=100'], resource)
 */
export function parseFilterTerms(terms: readonly string[], resource: ResourceConfig): Filter {
  const filter: Record<string, Record<string, unknown>> = {}
  for (const term of terms) {
    const m = PATTERN.exec(term)
    if (!m) throw new WarrantError('invalid_request', `cannot read filter "${term}": expected field=value, field>=value, field~tag …`, { filter: term })
    const [, field, op, raw] = m as unknown as [string, string, string, string]
    const type = resource.fields[field]
    const value = (text: string) => coerce(text, type)
    const cond = (filter[field] ??= {})
    if (raw === 'null' && (op === '=' || op === '!=')) cond.is_null = op === '='
    else if (op === '=') {
      const parts = raw.split(',')
      if (parts.length > 1) cond.in = parts.map(value)
      else cond.eq = value(raw)
    } else if (op === '!=') cond.not_in = raw.split(',').map(value)
    else if (op === '~') cond.contains = raw
    else cond[{ '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' }[op]!] = value(raw)
  }
  return filter as Record<string, FieldCondition>
}

function coerce(text: string, type: string | undefined): string | number | boolean {
  if (type === 'number' || type === 'integer') {
    const n = Number(text)
    if (text.trim() === '' || Number.isNaN(n)) throw new WarrantError('invalid_request', `"${text}" is not a number`)
    return n
  }
  if (type === 'boolean') {
    if (text !== 'true' && text !== 'false') throw new WarrantError('invalid_request', `"${text}" is not true or false`)
    return text === 'true'
  }
  return text
}
