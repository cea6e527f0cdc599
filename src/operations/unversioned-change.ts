import { quotedKey, type FieldTypeNames } from '../contract/index.js'
import type { SourceRecord } from '../connectors/index.js'
import type { RenderedWrite } from '../plans/plan-service.js'
import { checkRecordFields, pick, showValue, versionText } from './effect.js'

/**
 * A field the write sets that the record, re-read at the version the selection froze, holds otherwise than the target
 * last saw it at that version (the frozen value the reviewer was shown as "before", or an earlier attempt's read): said
 * as why the target is skipped; undefined when each is as it was. A version that does not move on every write (another
 * writer's UPDATE that leaves it as it was, an updated_at of one-second resolution) hid that writer's change, and the
 * write went on to overwrite a value no reviewer saw with one approved over another. A record that already holds the
 * approved values is not judged here (an earlier attempt's write that landed without moving the version; writing it
 * again changes nothing). Compared as the effect check compares: a timestamp by instant, a number by value; a field
 * only one of the two reads carries says nothing either way.
 *
 * @example changedAtSameVersion(record, '{"status":"active"}', rendered, types) // 'record "a-1" is still at … but "status" is …'
 */
export function changedAtSameVersion(
  id: string,
  record: SourceRecord,
  seen: string | null,
  rendered: Pick<RenderedWrite, 'set' | 'expect'>,
  types: FieldTypeNames,
): string | undefined {
  if (seen === null) return undefined
  let was: Record<string, unknown>
  try {
    was = JSON.parse(seen) as Record<string, unknown>
  } catch {
    return undefined
  }
  if (was === null || typeof was !== 'object') return undefined
  const compared = pick(was, Object.keys(rendered.set).filter((f) => Object.hasOwn(record.fields, f)))
  if (compared === null || Object.keys(compared).length === 0) return undefined
  if (checkRecordFields(record.fields, rendered.expect.fields, types).kind === 'holds') return undefined
  const check = checkRecordFields(record.fields, compared, types)
  if (check.kind === 'holds') return undefined
  const changed = Object.keys(compared).filter((f) => checkRecordFields(record.fields, { [f]: compared[f] }, types).kind !== 'holds')
  return `record ${quotedKey(id)} is still at ${versionText(record.version)}, as the selection froze it, but ${changed.map((f) => `${quotedKey(f)} is ${showValue(record.fields[f])}, not ${showValue(compared[f])}`).join(', ')} as it was at that version: another writer changed it without moving the version, so the approved change would overwrite a value no reviewer saw; nothing was written`
}

