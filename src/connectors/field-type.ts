import type { FieldType } from '../config/schema.js'
import { namesInstant } from '../contract/index.js'

/**
 * Whether a value can be what the config declares. Null is a value of every type (the upstream said "none");
 * only absence is not. Timestamps are ISO-8601 strings (an epoch number could be seconds or milliseconds: no
 * filter could compare it, so it is of another type; declare such a field `integer`); tags are lists of strings;
 * integers are safe integers (a larger one was rounded when its JSON was parsed).
 *
 * One rule for both directions: the http connector judges what it reads with it, and a proposal checks each
 * value a plan would write with it (src/plans/set-types.ts), so a plan never writes what a read would call mistyped.
 * A date-time without a zone is no instant here: an API (or an agent's parameter) writing local time gives no
 * way to know which, and reading it as UTC would silently move it by the writer's offset. Only the sql connector,
 * whose SQLite spells UTC that way, reads it as UTC (src/connectors/sql/page-judge.ts).
 */
export function fitsDeclaredType(value: unknown, type: FieldType): boolean {
  if (value === null) return true
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'integer':
      // past 2^53 JSON.parse has rounded it: not the integer the upstream sent, maybe another record's id
      return typeof value === 'number' && Number.isSafeInteger(value)
    case 'boolean':
      return typeof value === 'boolean'
    case 'timestamp':
      // filters compare timestamps by the instant they name: a value that names none would silently match nothing,
      // and a zoneless one would be compared at a guessed instant (strict: the README's "refused as ambiguous")
      return namesInstant(value, true)
    case 'tags':
      return Array.isArray(value) && value.every((v) => typeof v === 'string')
  }
}
