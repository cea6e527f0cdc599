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
  restoring?: Restoring,
): void {
  const unkept = setStringMisfit(set, strings, restoring?.values)
  if (unkept !== null && restoring) throw unrestorable(restoring, unkept.column.field, `${unkept.column.cause} now, which keeps a string as written only when it is ${unkept.keeps}: the column was changed since the record held it`, { value: unkept.value, column_type: unkept.column.column })
  if (unkept !== null) {
    throw new WarrantError('invalid_request', `action "${action}" ${stringMisfitMessage(unkept)}. Nothing was proposed: set a value the column keeps as written, or change the column`, {
      action,
      field: unkept.column.field,
      value: unkept.value,
      column_type: unkept.column.column,
    })
  }
  // a number the column keeps exactly once is kept exactly again: a before-value judged unfit means the column changed
  const unheld = setNumberMisfit(set, numbers)
  if (unheld !== null && restoring) {
    // a before-value past 2^53 - 1 may already be another integer than the row held (read as a JavaScript number)
    const why = unheld.inexact ? `${unheld.column.cause}, and ${unheld.value} is past 2^53 - 1, the reading of several integers: the integer the record held is not known exactly` : `${unheld.column.cause} now, which keeps only ${unheld.keeps}: the column was changed since the record held it`
    throw unrestorable(restoring, unheld.column.field, why, { value: unheld.value, column_type: unheld.column.column })
  }
  if (unheld !== null) {
    throw new WarrantError('invalid_request', `action "${action}" ${numberMisfitMessage(unheld)}. Nothing was proposed: set a number the column keeps exactly, or change the column`, {
      action,
      field: unheld.column.field,
      value: unheld.value,
      column_type: unheld.column.column,
    })
  }
  const found = setMisfit(set, misfits, restoring?.values)
  if (found === null) return
  if (restoring) throw unrestorable(restoring, found.misfit.field, `it is ${found.valueType}, and ${found.misfit.cause}`, { value_type: found.valueType, column_type: found.misfit.column })
  throw new WarrantError(
    'invalid_request',
    `action "${action}" ${setMisfitMessage(found)}. Nothing was proposed: ${found.misfit.fix}`,
    { action, field: found.misfit.field, value_type: found.valueType, column_type: found.misfit.column },
  )
}

/**
 * A compensation's target and the before-values it puts back (`RenderedWrite.restores`): its set is judged as its
 * write will be, each value the record held exempt (`restoresHeld`), and a refusal says which value cannot be restored.
 */
export interface Restoring {
  readonly id: string
  readonly values: Readonly<Record<string, unknown>>
}

/** 409: a recorded before-value no write can put back as it was; the proposal says so rather than a run failing it. */
function unrestorable(restoring: Restoring, field: string, why: string, details: Record<string, unknown>): WarrantError {
  const value = restoring.values[field]
  return new WarrantError(
    'conflict',
    `record "${restoring.id}" cannot be restored: its recorded before-value of "${field}", ${JSON.stringify(value)}, cannot be written back as it was (${why}). Nothing was proposed: restore it by hand, or put the column back as it was`,
    { id: restoring.id, field, value, ...details },
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
