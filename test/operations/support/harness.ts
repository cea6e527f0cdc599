import { resourceSchema, configSchema, type ActionConfig, type ResourceConfig, type WarrantConfig } from '../../../src/config/index.js'
import { WarrantError, type Actor, type Filter } from '../../../src/contract/index.js'
import { createListDigest } from '../../../src/contract/index.js'
import { createOperationService, type OperationService, type OperationServiceOptions } from '../../../src/operations/index.js'
import type { CommittablePlan, PlanRecord, PlanService, RenderedWrite } from '../../../src/plans/plan-service.js'
import { createFieldPolicy, type Catalogue, type Resource } from '../../../src/resources/index.js'
import type { SelectionRecord, SelectionService } from '../../../src/selections/selection-service.js'
import type { Store } from '../../../src/store/index.js'
import { createTestStore, type StoreKind } from '../../support/stores.js'
import { ModelUpstream } from './model-upstream.js'

export const AGENT: Actor = { principal: 'prn_agent', name: 'agent', role: 'agent', scopes: { resources: ['users'], actions: ['set_role'] }, surface: 'http' }
export const OUTSIDER: Actor = { principal: 'prn_other', name: 'other', role: 'agent', scopes: { resources: ['invoices'], actions: '*' }, surface: 'http' }
export const SILENT_LOG = { info() {}, warn() {}, error() {} }

export const USERS: ResourceConfig = resourceSchema.parse({
  environment: { name: 'model-prod' },
  connector: { kind: 'sql', url: 'sqlite:/nonexistent/model.db', table: 'users' },
  fields: { id: 'string', role: 'string', status: 'string', version: 'integer', secret: 'string' },
  version_field: 'version',
  review_fields: ['id', 'role', 'status'],
  denied_fields: ['secret'],
  actions: {
    set_role: {
      params: { role: { type: 'string' } },
      set: { role: '{{params.role}}' },
      precondition: { status: 'active' },
    },
  },
})

export interface Harness {
  readonly store: Store
  /** the store's URL, to look at it from another connection (what is committed, not what this one holds) */
  readonly storeUrl: string
  readonly upstream: ModelUpstream
  readonly operations: OperationService
  readonly selection: SelectionRecord
  readonly plan: PlanRecord
  readonly ids: readonly string[]
  /** compensation requests the fake plan service received */
  readonly compensations: { operationId: string; targets: readonly { id: string; before: unknown; after: unknown }[] }[]
  /** a second service on the same store (another gateway instance) */
  instance(options?: Partial<OperationServiceOptions>): OperationService
  /** a new plan (and selection) over the same members, approved */
  addPlan(): Promise<PlanRecord>
  close(): Promise<void>
}

export interface HarnessOptions {
  readonly count: number
  readonly execution?: Partial<WarrantConfig['execution']>
  readonly consistentSnapshot?: boolean
  readonly selectionExpiresInMs?: number
  readonly service?: Partial<OperationServiceOptions>
  readonly clock?: () => Date
  /** the model connector writes windows (`writeWindow`, the version enforced): the executor's window loop */
  readonly windowed?: boolean
}

export const userId = (i: number) => `u${String(i).padStart(4, '0')}`

/** A store with one frozen selection of `count` users and one approved plan `set_role → viewer`, and the operation service over a model upstream. */
export async function createHarness(kind: StoreKind, options: HarnessOptions): Promise<Harness> {
  const { store, url: storeUrl, drop } = await createTestStore(kind, options.clock ? { clock: options.clock } : {})
  const ids = Array.from({ length: options.count }, (_, i) => userId(i))
  const upstream = new ModelUpstream(ids, () => ({ role: 'member', status: 'active', secret: 's3cret' }))
  const execution = { ...configSchema.parse({ resources: {} }).execution, ...options.execution }
  const clock = options.clock ?? (() => new Date())
  const selections = new Map<string, SelectionRecord>()
  const planRecords = new Map<string, PlanRecord>()
  const compensations: Harness['compensations'] = []
  const consistent = options.consistentSnapshot ?? true
  let serial = 0

  const addSelectionAndPlan = async (): Promise<PlanRecord> => {
    serial += 1
    const selectionId = `sel_${serial}_${Math.random().toString(36).slice(2, 8)}`
    const digest = createListDigest()
    for (const id of ids) digest.add({ id, version: '1' })
    const now = clock()
    const selection: SelectionRecord = {
      selection_id: selectionId,
      resource: 'users',
      environment: 'model-prod',
      selector: { filter: { status: 'active' }, exclude: [{ rule: 'suspended', filter: { role: 'suspended' } }] },
      fields: ['id', 'role', 'status'],
      withheld_fields: [],
      count: ids.length,
      digest: digest.finish(),
      complete: true,
      consistent_snapshot: consistent,
      created_by: AGENT.principal,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + (options.selectionExpiresInMs ?? 3_600_000)).toISOString(),
      state: 'frozen',
      completeness: { status: 'complete', truncated: false, incomplete_reasons: [], continuation: null, warnings: [], scope: { resource: 'users', environment: 'model-prod', visibility: 'all', snapshot: null, consistent_snapshot: consistent } },
      exclusions: [{ rule: 'suspended', filter: { role: 'suspended' }, count: 0 }],
      groups: [],
      origin: null,
      upstream_digest: null,
    }
    selections.set(selectionId, selection)
    await store.db
      .insertInto('selections')
      .values({
        id: selectionId,
        resource: 'users',
        environment: 'model-prod',
        selector: JSON.stringify(selection.selector),
        fields: JSON.stringify(selection.fields),
        count: ids.length,
        digest: selection.digest,
        complete: 1,
        completeness: '{}',
        consistent_snapshot: consistent ? 1 : 0,
        exclusions: '{}',
        groups: '{}',
        created_by: AGENT.principal,
        created_at: selection.created_at,
        expires_at: selection.expires_at,
        state: 'frozen',
        origin: null,
      })
      .execute()
    for (let start = 0; start < ids.length; start += 500)
      await store.db
        .insertInto('selection_members')
        .values(ids.slice(start, start + 500).map((id, i) => ({ selection_id: selectionId, ord: start + i, record_id: id, version: '1', fields: JSON.stringify({ id, role: 'member', status: 'active' }), source: 'model' })))
        .execute()
    const plan: PlanRecord = {
      plan_id: `plan_${selectionId}`,
      selection_id: selectionId,
      resource: 'users',
      environment: 'model-prod',
      action: { type: 'set_role', params: { role: 'viewer' } },
      plan_digest: `sha256:plan-${selectionId}`,
      selection_digest: selection.digest,
      target_count: ids.length,
      state: 'approved',
      proposed_by: AGENT.principal,
      created_at: selection.created_at,
    }
    planRecords.set(plan.plan_id, plan)
    await store.db
      .insertInto('plans')
      .values({
        id: plan.plan_id,
        selection_id: selectionId,
        resource: 'users',
        environment: 'model-prod',
        action: JSON.stringify(plan.action),
        action_type: 'set_role',
        plan_digest: plan.plan_digest,
        selection_digest: plan.selection_digest,
        target_count: ids.length,
        changes_summary: '{}',
        policy: '{}',
        state: 'approved',
        proposed_by: AGENT.principal,
        created_at: plan.created_at,
        compensates: null,
      })
      .execute()
    return plan
  }
  const plan = await addSelectionAndPlan()
  const selection = selections.get(plan.selection_id)!

  // Only what the operation service calls; the rest of the interface is the plans module's.
  const plans = {
    async assertCommittable(_actor: Actor, planId: string, expectedDigest?: unknown): Promise<CommittablePlan> {
      const found = planRecords.get(planId) ?? notFound(planId)
      const row = await store.db.selectFrom('plans').select('state').where('id', '=', planId).executeTakeFirstOrThrow()
      if (row.state === 'committed') throw new WarrantError('conflict', 'plan already committed')
      const expected = typeof expectedDigest === 'string' ? { plan_digest: expectedDigest } : ((expectedDigest ?? {}) as { plan_digest?: string; selection_digest?: string })
      if (expected.plan_digest !== undefined && expected.plan_digest !== found.plan_digest) throw new WarrantError('digest_mismatch', 'plan digest differs')
      if (expected.selection_digest !== undefined && expected.selection_digest !== found.selection_digest) throw new WarrantError('digest_mismatch', 'selection digest differs')
      // approved by fiat: no approval row exists for the commit to count again (reviewers_needed 0)
      return { plan: found, selection: selections.get(found.selection_id)!, actionConfig: USERS.actions.set_role!, approvals: [{ principal: 'prn_reviewer', decided_at: found.created_at, expires_at: null }], standing_approval: null, reviewers_needed: 0, approval_ttl_minutes: 15, run_limits: null }
    },
    renderWrite: (p: PlanRecord, action: ActionConfig) => renderWrite(p, action),
    findBySelectionAndAction: async (_actor: Actor, selectionId: string, action: { type: string; params?: Record<string, unknown> }) =>
      [...planRecords.values()].find((p) => p.selection_id === selectionId && p.action.type === action.type && JSON.stringify(p.action.params) === JSON.stringify(action.params ?? {})) ?? null,
    // the model upstream never moves and its one action is reversible: nothing for the real checks to refuse
    assertCompensable: async () => undefined,
    // the action as the model defines it, never redefined since the operation ran
    actionConfigOf: () => USERS.actions.set_role!,
    proposeCompensation: async (_actor: Actor, operationId: string, _source: PlanRecord, targets: readonly { id: string; before: unknown; after: unknown }[]) => {
      compensations.push({ operationId, targets })
      return { plan_id: `comp_${operationId}`, target_count: targets.length }
    },
  } as unknown as PlanService
  const isExpired = (s: SelectionRecord, now = clock().toISOString()) => now >= s.expires_at
  // Only what the operation service calls; the rest of the interface is the selections module's.
  const selectionService = {
    load: async (_actor: Actor, id: string) => selections.get(id) ?? notFound(id),
    isExpired,
    assertUsable(s: SelectionRecord, now?: string) {
      if (isExpired(s, now)) throw new WarrantError('expired', `selection ${s.selection_id} expired`)
      if (!s.complete) throw new WarrantError('selection_incomplete', 'incomplete')
    },
  } as unknown as SelectionService
  const catalogue = fakeCatalogue(upstream, consistent, options.windowed ?? false)
  const make = (extra: Partial<OperationServiceOptions> = {}) =>
    createOperationService({
      store,
      catalogue,
      selections: selectionService,
      plans,
      execution,
      log: SILENT_LOG,
      clock,
      connectorFor: () => catalogue.get('users').connector,
      ...options.service,
      ...extra,
    })
  const operations = make()
  const extra: OperationService[] = []
  return {
    store,
    storeUrl,
    upstream,
    operations,
    selection,
    plan,
    ids,
    compensations,
    instance(o) {
      const service = make(o)
      extra.push(service)
      return service
    },
    addPlan: addSelectionAndPlan,
    async close() {
      await Promise.all([operations, ...extra].map((s) => s.close()))
      await drop()
    },
  }
}

/** The write a set_role plan gives each target: the approved role, expected back. */
export function renderWrite(plan: PlanRecord, action: ActionConfig): RenderedWrite & { precondition?: Filter } {
  const set: Record<string, unknown> = {}
  for (const [field, template] of Object.entries(action.set))
    set[field] = typeof template === 'string' ? template.replace(/\{\{params\.(\w+)\}\}/g, (_m, name: string) => String(plan.action.params[name])) : template
  return { set, expect: { status: action.expect.status, fields: action.expect.fields ?? set } }
}

function fakeCatalogue(upstream: ModelUpstream, consistentSnapshot: boolean, windowed: boolean): Catalogue {
  const connector = upstream.connector({ consistentSnapshot, windowed })
  const resource: Resource = { name: 'users', config: USERS, environment: 'model-prod', connector, policy: createFieldPolicy(USERS) }
  return {
    names: ['users'],
    get: (name) => {
      if (name !== 'users') throw new WarrantError('not_found', `unknown resource "${name}"`)
      return resource
    },
    list: () => [resource],
    close: async () => undefined,
  }
}

function notFound(id: string): never {
  throw new WarrantError('not_found', `no "${id}"`)
}
