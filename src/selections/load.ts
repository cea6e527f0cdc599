import type { Kysely } from 'kysely'
import { type Actor, WarrantError } from '../contract/index.js'
import { storeNowColumn, type Database, type IsoTimestamp, type SelectionRow } from '../store/index.js'
import { failedSelection, reapAbandoned, stillBuilding } from './build-lease.js'
import { type SelectionContext, assertInScope } from './context.js'
import { type StoredLookalikes, storedLookalikesSchema } from './lookalike-groups.js'
import { refuseIfPruned } from './pruned-members.js'
import type { SelectionCompleteness, SelectionMember, SelectionOrigin, SelectionRecord } from './selection-service.js'

/** A selection's row as loaded, with the store's now read by the same statement: what its expiry is judged at. */
export type LoadedSelectionRow = SelectionRow & { readonly store_now: IsoTimestamp }

export async function loadRow(ctx: SelectionContext, selectionId: string): Promise<LoadedSelectionRow> {
  const row = await ctx.db.selectFrom('selections').selectAll().select(storeNowColumn(ctx.db, ctx.nowIso()).as('store_now')).where('id', '=', selectionId).executeTakeFirst()
  if (!row) throw new WarrantError('not_found', `no selection "${selectionId}"`, { selection_id: selectionId })
  // A selection still building (or abandoned mid-build) has no digest yet; serving it would expose a partial set.
  // One whose builder is gone is marked failed here, so the answer says why it will never be served.
  if (row.state === 'building') {
    if ((await reapAbandoned(ctx, selectionId)).length === 0) throw stillBuilding(selectionId, row.builder)
    return loadRow(ctx, selectionId)
  }
  if (row.state === 'failed') throw failedSelection(selectionId, row.failure)
  return row
}

export function parseRow(ctx: SelectionContext, row: LoadedSelectionRow): SelectionRecord {
  const completeness = JSON.parse(row.completeness) as SelectionCompleteness
  // Expiry is derived at read time, so no sweeper has to rewrite rows for it; at the store's now (the database's on
  // PostgreSQL), so every instance sharing the store says alike whether it has expired.
  const expired = row.expires_at <= row.store_now
  // a field denied since the freeze (it turned out to hold secrets) is stored with the members but never served
  const denied = new Set(ctx.catalogue.names.includes(row.resource) ? ctx.catalogue.get(row.resource).config.denied_fields : [])
  const fields = JSON.parse(row.fields) as string[]
  const groups = JSON.parse(row.groups) as SelectionRecord['groups']
  return {
    selection_id: row.id,
    resource: row.resource,
    environment: row.environment,
    selector: JSON.parse(row.selector) as SelectionRecord['selector'],
    fields: fields.filter((f) => !denied.has(f)),
    withheld_fields: [...new Set([...fields, ...groups.map((g) => g.field)])].filter((f) => denied.has(f)),
    count: Number(row.count),
    digest: row.digest,
    complete: row.complete === 1,
    consistent_snapshot: row.consistent_snapshot === 1,
    created_by: row.created_by,
    created_at: row.created_at,
    expires_at: row.expires_at,
    state: row.state === 'frozen' && expired ? 'expired' : row.state,
    completeness,
    exclusions: JSON.parse(row.exclusions) as SelectionRecord['exclusions'],
    groups: groups.filter((g) => !denied.has(g.field)),
    origin: row.origin === null ? null : (JSON.parse(row.origin) as SelectionOrigin),
    upstream_digest: row.upstream_digest,
    lookalike_ids: storedLookalikesOf(row.lookalike_ids),
    members_pruned_at: row.members_pruned_at,
  }
}

/** The stored look-alike groups; null when none are stored, or what is stored is not them (edited by hand): walked again then. */
function storedLookalikesOf(text: string | null): StoredLookalikes | null {
  if (text === null) return null
  try {
    const parsed = storedLookalikesSchema.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : null
  } catch {
    return null
  }
}

export async function load(ctx: SelectionContext, actor: Actor, selectionId: string): Promise<SelectionRecord> {
  const row = await loadRow(ctx, selectionId)
  assertInScope(actor, row.resource)
  return parseRow(ctx, row)
}

/** Members' places and ids only, a page at a time: what a walk over every member for their ids needs. */
export async function memberIds(ctx: SelectionContext, selectionId: string, afterOrd: number, limit: number): Promise<{ ord: number; id: string }[]> {
  const page = await memberIdsOn(ctx.db, selectionId, afterOrd, limit)
  if (page.length < limit) await refuseIfPruned(ctx.db, selectionId)
  return page
}

/** `memberIds` on a connection or transaction of the caller's (the freeze's, before the selection is served). */
export async function memberIdsOn(db: Kysely<Database>, selectionId: string, afterOrd: number, limit: number): Promise<{ ord: number; id: string }[]> {
  const rows = await db.selectFrom('selection_members').select(['ord', 'record_id']).where('selection_id', '=', selectionId).where('ord', '>', afterOrd).orderBy('ord').limit(limit).execute()
  return rows.map((r) => ({ ord: Number(r.ord), id: r.record_id }))
}

export async function members(ctx: SelectionContext, selectionId: string, afterOrd: number, limit: number): Promise<SelectionMember[]> {
  const rows = await ctx.db
    .selectFrom('selection_members')
    .select(['ord', 'record_id', 'version', 'fields', 'source'])
    .where('selection_id', '=', selectionId)
    .where('ord', '>', afterOrd)
    .orderBy('ord')
    .limit(limit)
    .execute()
  // a short page is the end of the members, or a selection retention pruned: only the first may be answered as it is
  if (rows.length < limit) await refuseIfPruned(ctx.db, selectionId)
  return rows.map((r) => ({ ord: Number(r.ord), id: r.record_id, version: r.version, fields: JSON.parse(r.fields) as Record<string, unknown>, source: r.source }))
}
