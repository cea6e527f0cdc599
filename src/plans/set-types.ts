import type { FieldType } from '../config/index.js'
import { fitsDeclaredType, numberMisfitMessage, setMisfit, setMisfitMessage, setNumberMisfit, setStringMisfit, stringMisfitMessage, type FieldTypeMisfit, type NumberColumn, type StringColumn } from '../connectors/index.js'
import { instantOf, WarrantError } from '../contract/index.js'

/**
 * A rendered `set` is checked against its fields' declared types when it is proposed, with the connectors' own
 * rule (null fits every type, as every write path sends it). Otherwise a value that cannot be written (a string
 * param into a number field) is previewed, reviewed and approved, and only the executor refuses it, target by
 * target, after a person has signed off on a change that could never happen.
 *
 * @example assertSettable('set_amount', { amount_due: 'number' }, { amount_due: 'abc' }) // throws invalid_request
 */
export function assertSettable(action: string, fields: Readonly<Record<string, FieldType>>, set: Readonly<Record<string, unknown>>): void {
  for (const [field, value] of Object.entries(set)) {
    const type = Object.hasOwn(fields, field) ? fields[field] : undefined
    // an undeclared field is refused when the config is loaded (check-resource.ts); nothing to judge here
    if (type === undefined || fitsDeclaredType(value, type)) continue
    const got = kindOf(value, type)
    throw new WarrantError(
      'invalid_request',
      `action "${action}" would set "${field}", a ${type} field, to ${got}; it takes ${TAKES[type]} (or null). Nothing was proposed: give a parameter of the field's type`,
      { action, field, declared_type: type, value_type: got },
    )
  }
}

/**
 * A rendered `set` is checked, too, against the column types its upstream declares (a sql resource's
 * `fieldTypeMisfits`, the judgement that refuses a filter on the field): a boolean into a PostgreSQL integer column
 * is of the field's declared type, yet no write of it can ever land as approved. `misfits` null (no catalogue, or
 * it could not be read): nothing to judge here, and the write itself judges again before it is sent. So is a string
 * a `strings` column would not keep as written (`setStringMisfit`: "abc" into an integer column, a string field),
 * and a number a `numbers` column would round or refuse (`setNumberMisfit`: 12.345 into numeric(12,2)).
 *
 * @example assertColumnsFit('flag_on', misfits, { flag: true }) // throws invalid_request naming flag, a boolean, integer
 */
export function assertColumnsFit(
  action: string,
  misfits: readonly FieldTypeMisfit[] | null,
  set: Readonly<Record<string, unknown>>,
  strings: readonly StringColumn[] | null = null,
  numbers: readonly NumberColumn[] | null = null,
): void {
  const unkept = setStringMisfit(set, strings)
  if (unkept !== null) {
    throw new WarrantError('invalid_request', `action "${action}" ${stringMisfitMessage(unkept)}. Nothing was proposed: set a value the column keeps as written, or change the column`, {
      action,
      field: unkept.column.field,
      value: unkept.value,
      column_type: unkept.column.column,
    })
  }
  const unheld = setNumberMisfit(set, numbers)
  if (unheld !== null) {
    throw new WarrantError('invalid_request', `action "${action}" ${numberMisfitMessage(unheld)}. Nothing was proposed: set a number the column keeps exactly, or change the column`, {
      action,
      field: unheld.column.field,
      value: unheld.value,
      column_type: unheld.column.column,
    })
  }
  const found = setMisfit(set, misfits)
  if (found === null) return
  throw new WarrantError(
    'invalid_request',
    `action "${action}" ${setMisfitMessage(found)}. Nothing was proposed: declare the field as the column is (or change the column), or set another value`,
    { action, field: found.misfit.field, value_type: found.valueType, column_type: found.misfit.column },
  )
}

/** What a field of each type accepts, in the words of the refusal. */
const TAKES: Record<FieldType, string> = {
  string: 'a string',
  number: 'a finite number',
  integer: 'an integer (a safe one, below 2^53)',
  boolean: 'true or false',
  timestamp: 'an ISO-8601 date, or a date-time with Z or an offset such as +02:00',
  tags: 'a list of strings',
}

/** The value's own type, as the refusal names it (never the value: it may be long, and the type is the fault). */
function kindOf(value: unknown, type: FieldType): string {
  if (Array.isArray(value)) return type === 'tags' ? 'a list holding something other than strings' : 'a list'
  if (typeof value === 'number' && (type === 'integer' || type === 'number')) return type === 'integer' && Number.isFinite(value) ? 'a number that is not a safe integer' : 'a number that is not finite'
  if (typeof value === 'string' && type === 'timestamp') return instantOf(value) !== null ? 'a date-time without a zone (ambiguous: add Z or an offset)' : 'a string that names no instant'
  if (typeof value === 'object') return 'an object'
  return `a ${typeof value}`
}
