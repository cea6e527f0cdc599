import { sql } from 'kysely'
import { WarrantError } from '../contract/index.js'
import { COUNTER_OR_TIME_SOURCE, FEWEST_VERSIONED_RECORDS, mostRepeatingDistinct, stringVersionField, versionOverwrite, versionsRepeat } from '../config/index.js'
import type { Resource } from '../resources/index.js'
import type { PlanContext } from './plan-context.js'

/**
 * A `string` version field whose frozen values repeat across the selection's members as a business field's do (a plan
 * name, a state; the rule `warrant check` judges by, config/version-repeats.ts) refuses the proposal: a sql write
 * would set it to a fresh UUID, overwriting the business value unapproved (the effect check exempts the version), and
 * another writer's change never moves it, so a stale write is not told apart; an HTTP If-Match of it is as blind. Only
 * `check` judged it, so an operator who never ran it got exactly that. 409, nothing proposed.
 *
 * Counted in the store, never by loading the members (a selection may hold a million): the members with a version, then
 * their distinct versions, each over the selection's rows alone (an index range on selection_id), the second stopped
 * once past the most the rule lets trip; only when it trips, one more statement looks for a version that is no counter
 * or time (text holding only those is exempt, as check exempts it), stopping at the first found. No index on version:
 * measured at a million members (beside 250,000 of another selection), 1.0-2.1 s on SQLite and PostgreSQL, 3.8-4.1 s
 * where counters kept as text trip it and every version is matched; the pass over every member the proposal makes next
 * took 8.4-8.8 s. (Counted whole, COUNT(DISTINCT) of a million UUIDs took 9.3 s on SQLite.)
 */
export async function assertVersionsPerWrite(ctx: Pick<PlanContext, 'db' | 'store'>, resource: Resource, selectionId: string): Promise<void> {
  const version = stringVersionField(resource.config)
  if (version === null) return
  const members = Number(
    (await ctx.db.selectFrom('selection_members').select((eb) => eb.fn.count<number | string>('version').as('members')).where('selection_id', '=', selectionId).executeTakeFirstOrThrow()).members,
  )
  if (members < FEWEST_VERSIONED_RECORDS) return
  // COUNT(DISTINCT version), stopped one past the most distinct values that still trip the rule: versions that are
  // their records' own (the usual case) are told apart after a tenth of the members, not counted to the last
  const most = mostRepeatingDistinct(members)
  const distinct = Number(
    (
      await ctx.db
        .selectFrom((eb) => eb.selectFrom('selection_members').select('version').distinct().where('selection_id', '=', selectionId).where('version', 'is not', null).limit(most + 1).as('seen'))
        .select((eb) => eb.fn.countAll<number | string>().as('distinct_versions'))
        .executeTakeFirstOrThrow()
    ).distinct_versions,
  )
  if (!versionsRepeat(members, distinct) || !(await anyNotCounterOrTime(ctx, selectionId))) return
  const { field, configKey } = version
  throw new WarrantError(
    'conflict',
    `version field "${field}" of resource "${resource.name}" holds ${distinct} distinct values over the ${members} members of selection ${selectionId}: ` +
      `values that repeat across records are what a business field holds (a plan, a state), not a version each write moves; ` +
      `${versionOverwrite(resource.config, field)}a change by another writer would not move it, so a stale write would not be told apart. ` +
      `Nothing was proposed: declare as ${configKey} a column that means nothing else and changes on every write (a counter, updated_at), then select again; \`warrant check\` judges it too`,
    { reason: 'repeated_versions', resource: resource.name, version_field: field, members, distinct_versions: distinct, config_keys: [configKey] },
  )
}

/** Whether any member's version is other than a counter or an ISO time kept as text (the first found ends the scan). */
async function anyNotCounterOrTime(ctx: Pick<PlanContext, 'db' | 'store'>, selectionId: string): Promise<boolean> {
  const other = ctx.store.dialect === 'postgres' ? sql<boolean>`version !~ ${COUNTER_OR_TIME_SOURCE}` : sql<boolean>`not (version regexp ${COUNTER_OR_TIME_SOURCE})`
  const found = await ctx.db.selectFrom('selection_members').select(sql<number>`1`.as('found')).where('selection_id', '=', selectionId).where('version', 'is not', null).where(other).limit(1).executeTakeFirst()
  return found !== undefined
}
