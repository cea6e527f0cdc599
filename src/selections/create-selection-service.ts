import { randomBytes } from 'node:crypto'
import {
  type Actor,
  type Filter,
  type Scope,
  WarrantError,
  clausesOf,
  inScope,
  matchesFilter,
} from '../contract/index.js'
import type { ResourceConfig } from '../config/index.js'
import { type Budget, type CursorCodec, walkInventory } from '../inventory/index.js'
import type { Catalogue, Resource } from '../resources/index.js'
import type { SelectionRow, Store } from '../store/index.js'
import { manifestStream } from './export.js'
import { type FrozenRow, MemberWriter, groupCounts, storeSeenFilter } from './freeze.js'
import { MEMBER_ORDERING, compareIds } from './id-order.js'
import { createPageCursors } from './page-cursor.js'
import { parseRequest } from './parse-request.js'
import { type ExcludedPage, type ExportFormat, type MemberPage, type SelectionView, selectionRequestSchema } from './schemas.js'
import type {
  CompensationTarget,
  ExclusionRule,
  SelectionCompleteness,
  SelectionMember,
  SelectionOrigin,
  SelectionRecord,
  SelectionRequest,
  SelectionService,
} from './selection-service.js'

export interface SelectionServiceOptions {
  readonly store: Store
  readonly catalogue: Catalogue
  /** Signs page cursors and the walk's continuation. */
  readonly cursorCodec: CursorCodec
  /** Default: the store's clock. */
  readonly clock?: () => Date
  /** Default 30; a resource's `selection_ttl_minutes` overrides it. */
  readonly defaultTtlMinutes?: number
  /** Members in the first page of a view; default 100. */
  readonly firstPageSize?: number
}

/** A selection's walk goes to the end unless the request sets tighter limits (each is reported if reached). */
export const SELECTION_DEFAULT_BUDGET: Required<Budget> = { maxPages: 1_000_000, maxItems: 50_000_000, deadlineMs: 600_000 }
/** A recovery is a filter `{id: {in: [...]}}`, and a filter's `in` holds at most this many values. */
export const RECOVERY_MAX_IDS = 10_000
const EXCLUSION_ATTRIBUTION = 'a record matching several exclusion rules is excluded once, under the first rule it matches (rules apply in the order given)'

/**
 * Selections: frozen, ordered, digested sets of records, with their exclusions, groups and completeness.
 *
 * @example
 * const selections = createSelectionService({ store, catalogue, cursorCodec, defaultTtlMinutes: 30 })
 * const view = await selections.create(actor, 'subscriptions', {
 *   filter: { status: 'past_due', region: 'eu' },
 *   exclude: [{ rule: 'disputed', filter: { tags: { contains: 'disputed' } } }],
 * })
 */
export function createSelectionService(options: SelectionServiceOptions): SelectionService {
  const { store, catalogue } = options
  const db = store.db
  const clock = options.clock ?? (() => new Date(store.now()))
  const nowIso = () => clock().toISOString()
  const defaultTtlMinutes = options.defaultTtlMinutes ?? 30
  const firstPageSize = options.firstPageSize ?? 100
  const cursors = createPageCursors(options.cursorCodec)

  const scoped = (actor: Actor, resource: string) => {
    if (!inScope(actor, resource)) throw new WarrantError('forbidden', `resource "${resource}" is outside this principal's scope`, { resource })
  }

  async function loadRow(selectionId: string): Promise<SelectionRow> {
    const row = await db.selectFrom('selections').selectAll().where('id', '=', selectionId).executeTakeFirst()
    if (!row || row.state === 'building' || row.state === 'failed')
      throw new WarrantError('not_found', `no selection "${selectionId}"`, { selection_id: selectionId })
    return row
  }

  function parseRow(row: SelectionRow): SelectionRecord {
    const completeness = JSON.parse(row.completeness) as SelectionCompleteness
    const expired = row.expires_at <= nowIso()
    return {
      selection_id: row.id,
      resource: row.resource,
      environment: row.environment,
      selector: JSON.parse(row.selector) as SelectionRecord['selector'],
      fields: JSON.parse(row.fields) as string[],
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
      groups: JSON.parse(row.groups) as SelectionRecord['groups'],
      origin: row.origin === null ? null : (JSON.parse(row.origin) as SelectionOrigin),
    }
  }

  async function load(actor: Actor, selectionId: string): Promise<SelectionRecord> {
    const row = await loadRow(selectionId)
    scoped(actor, row.resource)
    return parseRow(row)
  }

  async function members(selectionId: string, afterOrd: number, limit: number): Promise<SelectionMember[]> {
    const rows = await db
      .selectFrom('selection_members')
      .select(['ord', 'record_id', 'version', 'fields', 'source'])
      .where('selection_id', '=', selectionId)
      .where('ord', '>', afterOrd)
      .orderBy('ord')
      .limit(limit)
      .execute()
    return rows.map((r) => ({ ord: Number(r.ord), id: r.record_id, version: r.version, fields: JSON.parse(r.fields) as Record<string, unknown>, source: r.source }))
  }

  const memberView = (m: SelectionMember, fields: readonly string[]) => ({ ord: m.ord, id: m.id, version: m.version, fields: project(m.fields, fields) })
  const nextCursor = (selectionId: string, list: string, page: readonly SelectionMember[], limit: number, total: number) => {
    const last = page[page.length - 1]
    return last && page.length === limit && last.ord < total ? cursors.encode(selectionId, list, last.ord) : null
  }

  function toView(selection: SelectionRecord, first: readonly SelectionMember[]): SelectionView {
    const id = selection.selection_id
    const c = selection.completeness
    const expired = selection.state === 'expired'
    const origin = selection.origin
    return {
      selection_id: id,
      resource: selection.resource,
      environment: selection.environment,
      state: expired ? 'expired' : 'frozen',
      selector: { filter: selection.selector.filter, exclude: [...selection.selector.exclude] },
      fields: [...selection.fields],
      created_by: selection.created_by,
      created_at: selection.created_at,
      expires_at: selection.expires_at,
      count: selection.count,
      digest: selection.digest,
      consistent_snapshot: selection.consistent_snapshot,
      status: c.status,
      complete: selection.complete,
      truncated: c.truncated,
      incomplete_reasons: [...c.incomplete_reasons],
      continuation: c.continuation,
      warnings: [...c.warnings],
      scope: c.scope,
      committable: selection.complete && !expired,
      recovery_of: origin?.kind === 'recovery' ? origin.selection_id : null,
      compensation_of: origin?.kind === 'compensation' ? origin.operation_id : null,
      recovery: selection.complete
        ? null
        : {
            method: 'POST',
            path: `/v1/selections/${id}/recover`,
            count: selection.count,
            message:
              selection.count > RECOVERY_MAX_IDS
                ? `the inventory was incomplete; a recovery names at most ${RECOVERY_MAX_IDS} ids and this selection returned ${selection.count}: narrow the filter instead`
                : `the inventory was incomplete: this selection can be reviewed, never committed. Its recovery is a new selection of exactly the ${selection.count} record(s) it returned, complete by construction`,
          },
      exclusions: selection.exclusions.map((e) => ({ rule: e.rule, filter: e.filter, count: e.count, records_url: `/v1/selections/${id}/excluded?rule=${encodeURIComponent(e.rule)}` })),
      exclusion_rule: EXCLUSION_ATTRIBUTION,
      groups: selection.groups.map((g) => ({ ...g, values: [...g.values] })),
      records: first.map((m) => memberView(m, selection.fields)),
      next_cursor: nextCursor(id, 'members', first, firstPageSize, selection.count),
      records_url: `/v1/selections/${id}/records`,
      export_urls: { csv: `/v1/selections/${id}/export?format=csv`, ndjson: `/v1/selections/${id}/export?format=ndjson` },
    }
  }

  async function view(actor: Actor, selectionId: string): Promise<SelectionView> {
    const selection = await load(actor, selectionId)
    return toView(selection, await members(selectionId, 0, firstPageSize))
  }

  function expiryFor(resource: Resource, from: Date): string {
    const minutes = resource.config.selection_ttl_minutes ?? defaultTtlMinutes
    return new Date(from.getTime() + minutes * 60_000).toISOString()
  }

  interface FreezeRequest {
    readonly filter: Filter
    readonly exclude: readonly ExclusionRule[]
    readonly fields: readonly string[]
    readonly pageSize: number
    readonly budget: Budget
    readonly origin: SelectionOrigin | null
  }

  /** Walks the inventory and freezes what it returns; on any failure nothing is left behind. */
  async function freezeFromWalk(actor: Actor, resource: Resource, request: FreezeRequest): Promise<string> {
    const id = newSelectionId()
    const started = clock()
    const stored = storedFieldsOf(resource.config, request.fields)
    await insertBuilding(id, actor, resource, request.filter, request.exclude, request.fields, started, request.origin)
    try {
      const writer = new MemberWriter(store, id, request.exclude.map((r) => r.rule))
      const summary = await walkInventory(
        resource.connector,
        { resource: resource.name, filter: request.filter, fields: request.fields, pageSize: request.pageSize },
        request.budget,
        {
          scope: { resource: resource.name, environment: resource.environment, visibility: resource.config.visibility.description, restricted: resource.config.visibility.restricted },
          cursorCodec: options.cursorCodec,
          seen: storeSeenFilter(db, id),
        },
        async (page) => {
          const kept: FrozenRow[] = []
          const excluded: (FrozenRow & { rule: string })[] = []
          for (const record of page) {
            const row: FrozenRow = { id: record.id, version: record.version, fields: resource.policy.project(record.fields, stored), source: record.source }
            const rule = request.exclude.find((r) => matchesFilter(record.fields, r.filter))
            if (rule) excluded.push({ ...row, rule: rule.rule })
            else kept.push(row)
          }
          await writer.write(kept, excluded)
        },
      )
      const digest = await writer.finish()
      const completeness: SelectionCompleteness = {
        status: summary.status,
        truncated: summary.truncated,
        incomplete_reasons: summary.incomplete_reasons,
        continuation: summary.continuation,
        warnings: summary.warnings,
        scope: summary.scope,
      }
      await freezeRow(id, resource, writer, digest, summary.complete, summary.scope.consistent_snapshot, completeness, request.exclude)
      return id
    } catch (error) {
      await discard(id)
      throw error
    }
  }

  async function insertBuilding(
    id: string,
    actor: Actor,
    resource: Resource,
    filter: Filter,
    exclude: readonly ExclusionRule[],
    fields: readonly string[],
    started: Date,
    origin: SelectionOrigin | null,
  ): Promise<void> {
    await db
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
        created_at: started.toISOString(),
        expires_at: expiryFor(resource, started),
        state: 'building',
        origin: origin === null ? null : JSON.stringify(origin),
      })
      .execute()
  }

  async function freezeRow(
    id: string,
    resource: Resource,
    writer: MemberWriter,
    digest: string,
    complete: boolean,
    consistent: boolean,
    completeness: SelectionCompleteness,
    exclude: readonly ExclusionRule[],
  ): Promise<void> {
    const groups = await groupCounts(store, id, resource.config.group_by, writer.count)
    await db
      .updateTable('selections')
      .set({
        count: writer.count,
        digest,
        complete: complete ? 1 : 0,
        completeness: JSON.stringify(completeness),
        consistent_snapshot: consistent ? 1 : 0,
        exclusions: JSON.stringify(exclude.map((r) => ({ rule: r.rule, filter: r.filter, count: writer.exclusionCounts.get(r.rule) ?? 0 }))),
        groups: JSON.stringify(groups),
        state: 'frozen',
      })
      .where('id', '=', id)
      .execute()
  }

  async function discard(id: string): Promise<void> {
    try {
      await db.deleteFrom('selection_members').where('selection_id', '=', id).execute()
      await db.deleteFrom('selection_exclusions').where('selection_id', '=', id).execute()
      await db.deleteFrom('selections').where('id', '=', id).execute()
    } catch {
      // a selection left in `building` is never served (load refuses it)
    }
  }

  function assertUsable(selection: SelectionRecord, now = nowIso()): void {
    if (selection.expires_at <= now)
      throw new WarrantError('expired', `selection ${selection.selection_id} expired at ${selection.expires_at}; create a new selection and review it again`, {
        selection_id: selection.selection_id,
        expires_at: selection.expires_at,
      })
    if (!selection.complete)
      throw new WarrantError(
        'selection_incomplete',
        `selection ${selection.selection_id} was built from an incomplete inventory (${selection.completeness.incomplete_reasons.map((r) => r.code).join(', ')}); it can be reviewed, never changed. Recover it with POST /v1/selections/${selection.selection_id}/recover`,
        { selection_id: selection.selection_id, incomplete_reasons: selection.completeness.incomplete_reasons, recovery_path: `/v1/selections/${selection.selection_id}/recover` },
      )
  }

  return {
    async create(actor: Actor, resourceName: string, request: SelectionRequest): Promise<SelectionView> {
      const resource = catalogue.get(resourceName)
      scoped(actor, resourceName)
      const parsed = parseRequest(selectionRequestSchema, request, 'selection request')
      resource.policy.checkFilter(parsed.filter, 'filter')
      const rules = new Set<string>()
      parsed.exclude.forEach((rule, i) => {
        if (rules.has(rule.rule)) throw new WarrantError('invalid_request', `exclusion rule "${rule.rule}" is named twice; each rule needs its own name`, { field: `exclude.${i}.rule` })
        rules.add(rule.rule)
        resource.policy.checkFilter(rule.filter, `exclude[${i}] "${rule.rule}" filter`)
      })
      const fields = resource.policy.fields(parsed.fields)
      const id = await freezeFromWalk(actor, resource, {
        filter: parsed.filter,
        exclude: parsed.exclude,
        fields,
        pageSize: parsed.page_size,
        budget: {
          maxPages: parsed.budget.max_pages ?? SELECTION_DEFAULT_BUDGET.maxPages,
          maxItems: parsed.budget.max_items ?? SELECTION_DEFAULT_BUDGET.maxItems,
          deadlineMs: parsed.budget.deadline_ms ?? SELECTION_DEFAULT_BUDGET.deadlineMs,
        },
        origin: null,
      })
      return view(actor, id)
    },

    load,

    isExpired(selection, now = nowIso()) {
      return selection.expires_at <= now
    },

    members,

    view,

    async page(actor, selectionId, query): Promise<MemberPage> {
      const selection = await load(actor, selectionId)
      const limit = checkLimit(query.limit)
      const after = cursors.decode(selectionId, 'members', query.cursor, selection.count)
      const page = await members(selectionId, after, limit)
      return {
        selection_id: selectionId,
        count: selection.count,
        digest: selection.digest,
        records: page.map((m) => memberView(m, selection.fields)),
        next_cursor: nextCursor(selectionId, 'members', page, limit, selection.count),
        page: { returned: page.length, limit, ordering: MEMBER_ORDERING },
      }
    },

    async excluded(actor, selectionId, query): Promise<ExcludedPage> {
      const selection = await load(actor, selectionId)
      const rule = selection.exclusions.find((e) => e.rule === query.rule)
      if (!rule)
        throw new WarrantError(
          'invalid_request',
          `selection ${selectionId} has no exclusion rule "${query.rule}"; its rules: ${selection.exclusions.map((e) => e.rule).join(', ') || '(none)'}`,
          { field: 'rule' },
        )
      const limit = checkLimit(query.limit)
      const list = `excluded:${rule.rule}`
      const after = cursors.decode(selectionId, list, query.cursor, rule.count)
      const rows = await db
        .selectFrom('selection_exclusions')
        .select(['ord', 'record_id', 'version', 'fields'])
        .where('selection_id', '=', selectionId)
        .where('rule', '=', rule.rule)
        .where('ord', '>', after)
        .orderBy('ord')
        .limit(limit)
        .execute()
      const page = rows.map((r) => ({ ord: Number(r.ord), id: r.record_id, version: r.version, fields: JSON.parse(r.fields) as Record<string, unknown> }))
      return {
        selection_id: selectionId,
        rule: rule.rule,
        filter: rule.filter,
        count: rule.count,
        records: page.map((m) => memberView(m, selection.fields)),
        next_cursor: nextCursor(selectionId, list, page, limit, rule.count),
        page: { returned: page.length, limit, ordering: MEMBER_ORDERING },
      }
    },

    async exportStream(actor, selectionId, format: ExportFormat) {
      const selection = await load(actor, selectionId)
      return {
        stream: manifestStream(format, selection.fields, (after, limit) => members(selectionId, after, limit)),
        contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
        filename: `${selectionId}.${format}`,
        selection,
      }
    },

    async recover(actor, selectionId): Promise<SelectionView> {
      const old = await load(actor, selectionId)
      const resource = catalogue.get(old.resource)
      scoped(actor, resource.name)
      if (old.origin?.kind === 'compensation')
        throw new WarrantError('conflict', `selection ${selectionId} holds the targets of a compensation; it was not read from an inventory and has nothing to recover`)
      if (old.count === 0)
        throw new WarrantError('conflict', `selection ${selectionId} returned no record; there is nothing to recover: create a new selection`, { selection_id: selectionId })
      if (old.count > RECOVERY_MAX_IDS)
        throw new WarrantError(
          'invalid_request',
          `selection ${selectionId} returned ${old.count} records; a recovery names at most ${RECOVERY_MAX_IDS} ids (the filter's "in" limit). Narrow the filter and create smaller selections`,
          { count: old.count, max: RECOVERY_MAX_IDS },
        )
      const idType = resource.config.fields[resource.config.id_field]
      const ids: (string | number)[] = []
      for (let after = 0; ; ) {
        const page = await members(selectionId, after, 1000)
        for (const m of page) ids.push(idType === 'number' || idType === 'integer' ? Number(m.id) : m.id)
        if (page.length < 1000) break
        after = page[page.length - 1]!.ord
      }
      const filter: Filter = { [resource.config.id_field]: { in: ids } }
      const id = await freezeFromWalk(actor, resource, {
        filter,
        exclude: old.selector.exclude,
        fields: old.fields,
        pageSize: 1000,
        budget: SELECTION_DEFAULT_BUDGET,
        origin: { kind: 'recovery', selection_id: selectionId },
      })
      return view(actor, id)
    },

    async createFromTargets(actor, resourceName, origin, targets: readonly CompensationTarget[]): Promise<SelectionRecord> {
      const resource = catalogue.get(resourceName)
      scoped(actor, resourceName)
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
      const started = clock()
      const filter: Filter = { [idField]: { in: sorted.map((t) => t.id) } }
      await insertBuilding(id, actor, resource, filter, [], fields, started, origin)
      try {
        const writer = new MemberWriter(store, id, [])
        for (let i = 0; i < sorted.length; i += 1000) {
          const rows = sorted.slice(i, i + 1000).map((t): FrozenRow => {
            const values: Record<string, unknown> = { [idField]: t.id }
            for (const f of written) values[f] = t.after[f] ?? null
            return { id: t.id, version: t.version ?? null, fields: values, source: null }
          })
          await writer.write(rows, [])
        }
        const digest = await writer.finish()
        const scope: Scope = {
          resource: resource.name,
          environment: resource.environment,
          visibility: `the targets operation ${origin.operation_id} changed, from its ledger (not read from the upstream)`,
          snapshot: null,
          consistent_snapshot: false,
          sources: [...resource.connector.sources],
        }
        await freezeRow(id, resource, writer, digest, true, false, { status: 'complete', truncated: false, incomplete_reasons: [], continuation: null, warnings: [], scope }, [])
      } catch (error) {
        await discard(id)
        throw error
      }
      return parseRow(await loadRow(id))
    },

    assertUsable,
  }
}

/** `sel_` and 96 random bits, hex. */
function newSelectionId(): string {
  return `sel_${randomBytes(12).toString('hex')}`
}

function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return 100
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new WarrantError('invalid_request', 'limit must be an integer from 1 to 1000', { field: 'limit' })
  return limit
}

function project(values: Readonly<Record<string, unknown>>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of fields) out[f] = values[f] ?? null
  return out
}

/**
 * What a member keeps besides the fields the selection shows: whatever a plan on it needs to show before →
 * after and to judge its policy (fields the actions set or test, group-by fields, the standing approvals'
 * selectors and flags). Never a denied field.
 */
export function storedFieldsOf(config: ResourceConfig, fields: readonly string[]): string[] {
  const out = new Set<string>([config.id_field, ...fields, ...config.group_by])
  for (const action of Object.values(config.actions)) {
    for (const f of Object.keys(action.set)) out.add(f)
    for (const c of clausesOf(action.precondition)) out.add(c.field)
    for (const f of Object.keys(action.expect.fields ?? {})) out.add(f)
  }
  for (const standing of config.standing_approvals) {
    for (const c of clausesOf(standing.selector)) out.add(c.field)
    if (standing.flagged) for (const c of clausesOf(standing.flagged)) out.add(c.field)
  }
  const denied = new Set(config.denied_fields)
  return [...out].filter((f) => !denied.has(f) && f in config.fields)
}
