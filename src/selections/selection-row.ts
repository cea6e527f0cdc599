import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { leaseEnd, leaseNow, withKeyedLock, type Database } from '../store/index.js'
import type { Actor, Filter, Scope } from '../contract/index.js'
import { type Resource, upstreamDigestOf } from '../resources/index.js'
import { lostBuild } from './build-lease.js'
import { giveUpBuild, storeMayClear } from './given-up-builds.js'
import type { SelectionContext } from './context.js'
import type { MemberWriter } from './member-writer.js'
import type { ExclusionRule, SelectionCompleteness, SelectionOrigin } from './selection-service.js'

/**
 * A selection row's life: inserted as `building` before any member is written (members reference it), set
 * to `frozen` with its count, digest and summaries once the last member is in, or discarded on failure.
 */

/** `sel_` and 96 random bits, hex. */
export function newSelectionId(): string {
  return `sel_${randomBytes(12).toString('hex')}`
}

/** Its ttl from now on the store's clock (the database's on PostgreSQL): counted on a clock running ahead, it outlived its time for the other instances. */
function expiryFor(ctx: SelectionContext, resource: Resource, from: Date) {
  const minutes = resource.config.selection_ttl_minutes ?? ctx.defaultTtlMinutes
  return leaseEnd(ctx.db, from.toISOString(), minutes * 60_000)
}

export async function insertBuilding(
  ctx: SelectionContext,
  id: string,
  actor: Actor,
  resource: Resource,
  filter: Filter,
  exclude: readonly ExclusionRule[],
  fields: readonly string[],
  started: Date,
  origin: SelectionOrigin | null,
  keyed?: SelectionKey,
): Promise<void> {
  const inserted = await ctx.db
    .insertInto('selections')
    .values({
      id,
      resource: resource.name,
      environment: resource.environment,
      selector: JSON.stringify({ filter, exclude }),
      fields: JSON.stringify(fields),
      count: 0,
      digest: '',
      complete: 0,
      completeness: '{}',
      consistent_snapshot: 0,
      exclusions: '[]',
      groups: '[]',
      created_by: actor.principal,
      created_at: leaseNow(ctx.db, started.toISOString()),
      expires_at: expiryFor(ctx, resource, started),
      state: 'building',
      origin: origin === null ? null : JSON.stringify(origin),
      // where the walk reads (this process's catalogue does not change under it): what its members are bound to
      upstream_digest: upstreamDigestOf(resource.config),
      // whose walk this is, alive until then (renewed by keepBuilding): a builder that dies is known by this
      builder: ctx.owner,
      lease_until: leaseEnd(ctx.db, ctx.clock().toISOString(), ctx.buildLeaseMs),
      idempotency_key: keyed?.key ?? null,
      request_fingerprint: keyed?.fingerprint ?? null,
    })
    // the UNIQUE key decides between requests sent at once with one key: the first row in is the one built
    .onConflict((oc) => oc.column('idempotency_key').doNothing())
    .returning('id')
    .executeTakeFirst()
  if (!inserted) throw new KeyTaken()
}

/** A selection request's idempotency key, scoped to its principal, and the fingerprint of its canonical request. */
export interface SelectionKey {
  readonly key: string
  readonly fingerprint: string
}

/** `insertBuilding` found its idempotency key already held by another selection row: nothing was inserted. */
export class KeyTaken extends Error {}

export async function freezeRow(
  ctx: SelectionContext,
  id: string,
  resource: Resource,
  writer: MemberWriter,
  digest: string,
  complete: boolean,
  consistent: boolean,
  completeness: SelectionCompleteness,
  exclude: readonly ExclusionRule[],
  once?: FreezeOnce,
): Promise<string> {
  const groups = await writer.groupCounts()
  const lookalikes = await writer.lookalikes()
  const mark = (db: Kysely<Database>) =>
    db
      .updateTable('selections')
      .set({
        count: writer.count,
        digest,
        complete: complete ? 1 : 0,
        completeness: JSON.stringify(completeness),
        consistent_snapshot: consistent ? 1 : 0,
        exclusions: JSON.stringify(exclude.map((r) => ({ rule: r.rule, filter: r.filter, count: writer.exclusionCounts.get(r.rule) ?? 0 }))),
        groups: JSON.stringify(groups),
        lookalike_ids: JSON.stringify(lookalikes),
        state: 'frozen',
        lease_until: null,
      })
      .where('id', '=', id)
      // still ours to finish: a row another process marked failed (our lease had ended) had its members removed
      .where('state', '=', 'building')
      .where('builder', '=', ctx.owner)
      .executeTakeFirst()
      .then((result) => {
        if (Number(result.numUpdatedRows) !== 1) throw lostBuild(id)
      })
  if (!once) {
    await mark(ctx.db)
    return id
  }
  // Only frozen selections are ever served, so deciding here, under the lock, which one becomes frozen makes
  // concurrent equal requests name one selection: the first to get here; the others are handed it.
  return withKeyedLock(ctx.store, FREEZE_ONCE_LOCK_SPACE, once.key, async (trx) => {
    const earlier = await once.existing(trx)
    if (earlier !== undefined) return earlier
    await mark(trx)
    return id
  })
}

/** The advisory-lock space of `FreezeOnce` keys (PostgreSQL). */
const FREEZE_ONCE_LOCK_SPACE = 7_310_552

/**
 * A selection that must exist once per request (a recovery): `existing` finds an equal one already frozen,
 * looked up under a lock on `key` that every process sharing the store respects.
 */
export interface FreezeOnce {
  readonly key: string
  readonly existing: (db: Kysely<Database>) => Promise<string | undefined>
}

/** Removes a selection this process built and will not freeze (`why`: the failure that ended its build). */
export async function discard(ctx: SelectionContext, id: string, why: unknown): Promise<void> {
  const reason = `its build failed: ${why instanceof Error ? why.message : String(why)}`
  // asking a store that just refused as busy (or cut off) at once would wait out its timeout again, the SQLite
  // one with the event loop blocked: left to the reaping, which asks again after a pause
  if (storeMayClear(why)) return giveUpBuild(ctx, id, reason)
  try {
    await ctx.db.deleteFrom('selection_members').where('selection_id', '=', id).execute()
    await ctx.db.deleteFrom('selection_exclusions').where('selection_id', '=', id).execute()
    await ctx.db.deleteFrom('selections').where('id', '=', id).execute()
  } catch {
    // never served (load refuses a selection `building`), but its members and its idempotency key stayed: reaped
    // as failed, with the reason, once the store takes writes again
    giveUpBuild(ctx, id, reason)
  }
}

/** Discards a frozen selection no plan names (one that lost a race to an equal request; its id was never given out). */
export async function discardUnused(ctx: SelectionContext, id: string): Promise<void> {
  const named = await ctx.db.selectFrom('plans').select('id').where('selection_id', '=', id).executeTakeFirst()
  if (!named) await discard(ctx, id, 'an equal selection was frozen first')
}

/**
 * Freezes a selection whose members were written from a ledger, not walked (a compensation's, a remainder's): exact
 * by construction, so complete; `visibility` says where its members came from.
 */
export async function freezeExact(ctx: SelectionContext, id: string, resource: Resource, writer: MemberWriter, visibility: string): Promise<void> {
  const digest = await writer.finish()
  const scope: Scope = { resource: resource.name, environment: resource.environment, visibility, snapshot: null, consistent_snapshot: false, sources: [...resource.connector.sources] }
  await freezeRow(ctx, id, resource, writer, digest, true, false, { status: 'complete', truncated: false, incomplete_reasons: [], continuation: null, warnings: [], scope }, [])
}
