import type { SourceRecord } from './connector.js'

/**
 * The record with the whole object the upstream sent attached as `representation`, non-enumerable: it
 * never reaches JSON (a log line, a stored row, an answer) nor a copy made by spreading the record, so what
 * the config does not declare stays in memory on the write path only. `rounded`: the object holds a number
 * its JSON parser could not keep exactly (see `SourceRecord.representationRounded`).
 */
export function withRepresentation(record: SourceRecord, representation: unknown, rounded = false): SourceRecord {
  const out = Object.defineProperty({ ...record }, 'representation', { value: representation, enumerable: false })
  return rounded ? Object.defineProperty(out, 'representationRounded', { value: true, enumerable: false }) : out
}
