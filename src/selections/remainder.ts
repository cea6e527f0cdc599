import { type Actor, type Filter, WarrantError } from '../contract/index.js'
import { type SelectionContext, assertInScope } from './context.js'
import { type FrozenRow, MemberWriter } from './member-writer.js'
import { compareIds } from './id-order.js'
import { loadRow, parseRow } from './load.js'
import { discard, freezeExact, insertBuilding, newSelectionId } from './selection-row.js'
import type { RemainderTarget, SelectionOrigin, SelectionRecord } from './selection-service.js'

/** Members read from the operation's selection per query (an `in` list of ords). */
const SLICE = 500

/**
 * A remainder's selection is copied, not read: its members are the never-sent targets of an operation as the
 * operation's own selection froze them (fields, at the version and source the ledger holds), so the plan on it is
 * checked against what was reviewed then, and a record changed since is caught by the usual version checks.
 */
export async function createRemainder(
  ctx: SelectionContext,
  actor: Actor,
  resourceName: string,
  origin: Extract<SelectionOrigin, { kind: 'remainder' }>,
  from: string,
  targets: readonly RemainderTarget[],
): Promise<SelectionRecord> {
  const resource = ctx.catalogue.get(resourceName)
  assertInScope(actor, resourceName)
  if (targets.length === 0) throw new WarrantError('invalid_request', 'there is no target to put in the selection')
  const source = parseRow(ctx, await loadRow(ctx, from))
  const denied = new Set(resource.config.denied_fields)
  const idField = resource.config.id_field
  const sorted = [...targets].sort((a, b) => compareIds(a.id, b.id))
  const fields = source.fields.filter((f) => !denied.has(f))
  const id = newSelectionId()
  const filter: Filter = { [idField]: { in: sorted.map((t) => t.id) } }
  await insertBuilding(ctx, id, actor, resource, filter, [], fields, ctx.clock(), origin)
  try {
    const writer = new MemberWriter(ctx.store, id, [], resource.config.group_by)
    for (let i = 0; i < sorted.length; i += SLICE) {
      const slice = sorted.slice(i, i + SLICE)
      const rows = await ctx.db
        .selectFrom('selection_members')
        .select(['ord', 'record_id', 'fields'])
        .where('selection_id', '=', from)
        .where('ord', 'in', slice.map((t) => t.ord))
        .execute()
      const byOrd = new Map(rows.map((r) => [Number(r.ord), r]))
      await writer.write(
        slice.map((t): FrozenRow => {
          const member = byOrd.get(t.ord)
          if (!member || member.record_id !== t.id)
            throw new WarrantError('conflict', `target "${t.id}" is no longer a member of selection ${from}: the values it was frozen with are gone, so no remainder is proposed; select the records again`, { id: t.id, selection_id: from })
          const values = Object.fromEntries(Object.entries(JSON.parse(member.fields) as Record<string, unknown>).filter(([f]) => !denied.has(f)))
          return { id: t.id, version: t.version, fields: values, source: t.source }
        }),
        [],
      )
    }
    await freezeExact(ctx, id, resource, writer, `the targets operation ${origin.operation_id} never sent, as selection ${from} froze them (not read from the upstream again)`)
  } catch (error) {
    await discard(ctx, id, error)
    throw error
  }
  return parseRow(ctx, await loadRow(ctx, id))
}
