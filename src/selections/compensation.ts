import { type Actor, type Filter, WarrantError } from '../contract/index.js'
import { type SelectionContext, assertInScope } from './context.js'
import { type FrozenRow, MemberWriter } from './member-writer.js'
import { compareIds } from './id-order.js'
import { loadRow, parseRow } from './load.js'
import { discard, freezeExact, insertBuilding, newSelectionId } from './selection-row.js'
import type { CompensationTarget, SelectionOrigin, SelectionRecord } from './selection-service.js'

/**
 * A compensation's selection is frozen from the operation's ledger, not read from the upstream: its members
 * are the targets as we wrote them, so the compensating plan reverses exactly what the operation changed.
 */
export async function createFromTargets(
  ctx: SelectionContext,
  actor: Actor,
  resourceName: string,
  origin: Extract<SelectionOrigin, { kind: 'compensation' }>,
  targets: readonly CompensationTarget[],
): Promise<SelectionRecord> {
  const resource = ctx.catalogue.get(resourceName)
  assertInScope(actor, resourceName)
  if (targets.length === 0) throw new WarrantError('invalid_request', 'there is no target to put in the selection')
  const denied = new Set(resource.config.denied_fields)
  const idField = resource.config.id_field
  const sorted = [...targets].sort((a, b) => compareIds(a.id, b.id))
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i]!.id === sorted[i - 1]!.id) throw new WarrantError('invalid_request', `target "${sorted[i]!.id}" is listed twice`, { id: sorted[i]!.id })
  const written = new Set<string>()
  for (const t of sorted) for (const f of Object.keys(t.after)) if (!denied.has(f) && f !== idField) written.add(f)
  const fields = [idField, ...[...written].sort()]
  const id = newSelectionId()
  const started = ctx.clock()
  const filter: Filter = { [idField]: { in: sorted.map((t) => t.id) } }
  await insertBuilding(ctx, id, actor, resource, filter, [], fields, started, origin)
  try {
    const writer = new MemberWriter(ctx.store, id, [], resource.config.group_by)
    for (let i = 0; i < sorted.length; i += 1000) {
      const rows = sorted.slice(i, i + 1000).map((t): FrozenRow => {
        const values: Record<string, unknown> = { [idField]: t.id }
        for (const f of written) values[f] = t.after[f] ?? null
        return { id: t.id, version: t.version ?? null, fields: values, source: t.source ?? null }
      })
      await writer.write(rows, [])
    }
    await freezeExact(ctx, id, resource, writer, `the targets operation ${origin.operation_id} changed, from its ledger (not read from the upstream)`)
  } catch (error) {
    await discard(ctx, id, error)
    throw error
  }
  return parseRow(ctx, await loadRow(ctx, id))
}
