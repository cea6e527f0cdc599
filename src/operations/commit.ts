import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import type { WarrantConfig } from '../config/index.js'
import { checkIdempotencyKey, digestOf, inScope, scopedIdempotencyKey, WarrantError, type Actor } from '../contract/index.js'
import { assertAuthorityHolds, planInActionScope, rejectedPlan, runLimitsOf } from '../plans/index.js'
import type { ActionRequest, CommittablePlan, PlanService } from '../plans/plan-service.js'
import type { Catalogue } from '../resources/index.js'
import type { SelectionService } from '../selections/selection-service.js'
import { isUniqueViolation, storeNowColumn, writingTransaction, type OperationRow, type Store } from '../store/index.js'
import { pick } from './effect.js'
import { emptyCounts, findOperationByKey } from './ledger.js'
import { fixStopRules } from './stop-rules.js'
import type { CommitReceipt, CommitRoute, OperationExecution, TargetCounts } from './types.js'
import { operationUrl, parseExecution, resultsUrl } from './views.js'

export interface CommitDeps {
  readonly store: Store
  readonly catalogue: Catalogue
  readonly selections: SelectionService
  readonly plans: PlanService
  readonly execution: WarrantConfig['execution']
  readonly now: () => string
}

const LEDGER_CHUNK = 500

/**
 * The article's commit form, checked once: the /v1 route declares this schema (so its document and its 400 name an
 * empty id or digest) and the service parses it again for callers that reach it another way. Strict: a stripped key
 * (`dry_run: true`) would never reach its check, and the commit ran.
 */
export const bulkActionBodySchema = z.strictObject({
  selection_id: z.string().min(1).max(200),
  expected_digest: z.string().min(1).max(200).describe('the selection digest the reviewer saw; a different one is 409'),
  action: z.looseObject({ type: z.string().min(1).max(64) }).describe('{type, params: {...}} or the flat {type, reason: "…"}'),
})

/** `POST /v1/plans/{id}/commit`. */
export async function commitPlan(deps: CommitDeps, actor: Actor, planId: string, request: { readonly idempotencyKey?: string | null; readonly expectedDigest?: string | null }): Promise<CommitReceipt> {
  const expectedDigest = requireDigest(request.expectedDigest)
  const key = scopedIdempotencyKey(actor, requireKey(request.idempotencyKey))
  const fingerprint = digestOf({ route: 'plan_commit', plan_id: planId, body: { expected_digest: expectedDigest } })
  return withKey(deps, actor, key, fingerprint, async () => {
    const committable = await deps.plans.assertCommittable(actor, planId, expectedDigest)
    return createOperation(deps, actor, committable, { key, fingerprint, route: 'plan_commit' })
  })
}

/**
 * Replays the operation a key already names; otherwise runs the commit. A commit refused because a
 * concurrent request with the same key committed the plan meanwhile (the plan is now `committed`) is that
 * request's operation, not a refusal: the key is looked up again before any refusal is returned.
 */
async function withKey(deps: CommitDeps, actor: Actor, key: string, fingerprint: string, commit: () => Promise<CommitReceipt>): Promise<CommitReceipt> {
  const existing = await findOperationByKey(deps.store.db, key)
  if (existing) return replay(existing, fingerprint, actor)
  try {
    return await commit()
  } catch (error) {
    const meanwhile = await findOperationByKey(deps.store.db, key)
    if (meanwhile) return replay(meanwhile, fingerprint, actor)
    throw error
  }
}

/**
 * The article's form: `{selection_id, expected_digest, action}` against the resource. It commits the plan
 * approved for exactly this selection and this canonical action; there is none → `not_approved`.
 */
export async function commitBulkAction(deps: CommitDeps, actor: Actor, resourceName: string, request: { readonly idempotencyKey?: string | null; readonly body: unknown }): Promise<CommitReceipt> {
  const key = scopedIdempotencyKey(actor, requireKey(request.idempotencyKey))
  const parsed = bulkActionBodySchema.safeParse(request.body)
  if (!parsed.success)
    throw new WarrantError('invalid_request', `invalid request body: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`)
  const body = parsed.data
  const action = canonicalAction(body.action)
  const fingerprint = digestOf({ route: 'bulk_action', resource: resourceName, selection_id: body.selection_id, body: { expected_digest: body.expected_digest, action } })
  return withKey(deps, actor, key, fingerprint, () => commitSelection(deps, actor, resourceName, { ...body, action }, { key, fingerprint }))
}

/** The bulk-actions form once its key is known to be new: the selection, its digest, then its approved plan. */
async function commitSelection(
  deps: CommitDeps,
  actor: Actor,
  resourceName: string,
  body: { readonly selection_id: string; readonly expected_digest: string; readonly action: ActionRequest },
  request: { readonly key: string; readonly fingerprint: string },
): Promise<CommitReceipt> {
  const { action } = body
  const resource = deps.catalogue.get(resourceName)
  if (!inScope(actor, resource.name, action.type))
    throw new WarrantError('forbidden', `action "${action.type}" on "${resource.name}" is outside this token's scope`, { resource: resource.name, action: action.type })
  const selection = await deps.selections.load(actor, body.selection_id)
  if (selection.resource !== resource.name)
    throw new WarrantError('not_found', `selection "${selection.selection_id}" is a selection of "${selection.resource}", not of "${resource.name}"`, { selection_id: selection.selection_id })
  // judged as loaded: at the store's now (see selections/load.ts)
  deps.selections.assertUsable(selection)
  if (selection.digest !== body.expected_digest)
    throw new WarrantError('digest_mismatch', `expected_digest does not match selection "${selection.selection_id}" (its digest is ${selection.digest}); nothing was committed`, {
      selection_id: selection.selection_id,
      expected_digest: body.expected_digest,
      digest: selection.digest,
    })
  const plan = await deps.plans.findBySelectionAndAction(actor, selection.selection_id, action)
  if (!plan)
    throw new WarrantError('not_approved', `no plan binds selection "${selection.selection_id}" to this action; propose it and have it approved first`, { selection_id: selection.selection_id, action })
  const committable = await deps.plans.assertCommittable(actor, plan.plan_id, { selection_digest: body.expected_digest })
  return createOperation(deps, actor, committable, { ...request, route: 'bulk_action' })
}

/** `{type, params: {...}}`, or the article's flat `{type, reason: "…"}`: the same canonical `{type, params}`. */
export function canonicalAction(raw: Readonly<Record<string, unknown>> & { readonly type: string }): ActionRequest & { readonly params: Readonly<Record<string, string | number | boolean>> } {
  const { type, params, ...rest } = raw
  let source: Record<string, unknown>
  if (params !== undefined) {
    if (params === null || typeof params !== 'object' || Array.isArray(params)) throw new WarrantError('invalid_request', 'action.params must be an object', { field: 'action.params' })
    if (Object.keys(rest).length > 0) throw new WarrantError('invalid_request', `give action parameters either in action.params or beside action.type, not both (${Object.keys(rest).join(', ')})`)
    source = params as Record<string, unknown>
  } else source = rest
  const out: Record<string, string | number | boolean> = {}
  for (const [name, value] of Object.entries(source)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      throw new WarrantError('invalid_request', `action parameter "${name}" must be a string, number or boolean`, { field: `action.${name}` })
    out[name] = value
  }
  return { type, params: out }
}

/**
 * The articles' rule: a commit carries the digest the reviewer saw. Without it nothing binds what is written to
 * what was reviewed, so a missing one is refused on every surface before anything else is looked at.
 */
function requireDigest(digest: string | null | undefined): string {
  if (typeof digest !== 'string' || digest.trim() === '')
    throw new WarrantError('invalid_request', 'a commit needs expected_digest: the plan digest (or the selection digest) the reviewer approved', { field: 'expected_digest' })
  return digest
}

function requireKey(key: string | null | undefined): string {
  if (key === undefined || key === null || key.trim() === '')
    throw new WarrantError('idempotency_key_missing', 'a commit needs an Idempotency-Key header: the same key always names the same operation, so a retry never commits twice')
  return checkIdempotencyKey(key)
}

/** The same key: the same operation if the request is the same, else 422. */
function replay(row: OperationRow, fingerprint: string, actor: Actor): CommitReceipt {
  if (row.request_fingerprint !== fingerprint)
    throw new WarrantError('idempotency_key_reused', 'this Idempotency-Key was used for a different request; use a new key for a new commit', { operation_id: row.id })
  // A replay passes the same scope checks as the commit: a token narrowed since cannot read the receipt back.
  const plan = parseExecution(row)?.plan
  if (plan !== undefined && !planInActionScope(actor, plan))
    throw new WarrantError('forbidden', `action "${plan.action.type}" on "${plan.resource}" is outside this token's scope`, { resource: plan.resource, action: plan.action.type })
  const counts = JSON.parse(row.counts) as Partial<TargetCounts>
  return receipt(row.id, row.state, row.plan_id, Object.values(counts).reduce<number>((a, b) => a + (b ?? 0), 0), false)
}

function receipt(id: string, status: OperationRow['state'], planId: string, targetCount: number, created: boolean): CommitReceipt {
  return { operation_id: id, status, plan_id: planId, target_count: targetCount, results_url: resultsUrl(id), operation_url: operationUrl(id), created }
}

class KeyTaken extends Error {}

/**
 * One transaction: the operation (its stop rules fixed now), one `pending` target per member in member order
 * (streamed in chunks: memory does not grow with the selection), and the plan marked committed. The UNIQUE
 * idempotency key decides between concurrent commits with one key; the plan's state between two keys.
 */
async function createOperation(
  deps: CommitDeps,
  actor: Actor,
  committable: CommittablePlan,
  request: { readonly key: string; readonly fingerprint: string; readonly route: CommitRoute },
): Promise<CommitReceipt> {
  const { plan, selection, actionConfig } = committable
  if (!planInActionScope(actor, plan))
    throw new WarrantError('forbidden', `action "${plan.action.type}" on "${plan.resource}" is outside this token's scope`, { resource: plan.resource, action: plan.action.type })
  // assertCommittable proved these; checked again here because they are this module's own guarantees too (the
  // selection's expiry again at the store's now, in the transaction below).
  deps.selections.assertUsable(selection)
  if (selection.digest !== plan.selection_digest)
    throw new WarrantError('digest_mismatch', `selection "${selection.selection_id}" changed since the plan was made (digest ${selection.digest}, the plan has ${plan.selection_digest})`)
  const resource = deps.catalogue.get(plan.resource)
  const hidden = new Set(resource.config.denied_fields)
  const setFields = Object.keys(actionConfig.set).filter((f) => !hidden.has(f))
  const execution: OperationExecution = {
    route: request.route,
    plan,
    action_config: actionConfig,
    selection: { selection_id: selection.selection_id, digest: selection.digest, selector: selection.selector, consistent_snapshot: selection.consistent_snapshot },
    approvals: committable.approvals,
    standing_approval: committable.standing_approval,
    upstream: resource.config.connector.kind,
  }
  const operationId = `op_${randomUUID()}`
  const now = deps.now()
  try {
    // SQLite's write lock from BEGIN (PostgreSQL: a plain transaction; the plan's row lock is taken by its update):
    // the checks below read under it, and a read before the first write would be refused at once, not waited for,
    // when another process wrote meanwhile
    await writingTransaction(deps.store, async (trx) => {
      const inserted = await trx
        .insertInto('operations')
        .values({
          id: operationId,
          plan_id: plan.plan_id,
          idempotency_key: request.key,
          request_fingerprint: request.fingerprint,
          state: 'pending',
          // the plan's own (what its approval covers; its committability proved the config still asks them), else as before
          stop_rules: JSON.stringify(fixStopRules(committable.run_limits ?? runLimitsOf(deps.execution), selection.consistent_snapshot)),
          halt_reason: null,
          counts: JSON.stringify({ ...emptyCounts(), pending: selection.count }),
          lease_owner: null,
          lease_expires_at: null,
          execution: JSON.stringify(execution),
          created_by: actor.principal,
          created_at: now,
          updated_at: now,
          finished_at: null,
        })
        .onConflict((oc) => oc.column('idempotency_key').doNothing())
        .returning('id')
        .executeTakeFirst()
      if (!inserted) throw new KeyTaken()
      // plans.markCommitted's own update, inside this transaction: the ledger and the plan's state commit together. It
      // reads the store's now too (the database's on PostgreSQL): what the approval and the selection are judged at below.
      const marked = await trx
        .updateTable('plans')
        .set({ state: 'committed' })
        .where('id', '=', plan.plan_id)
        .where('state', 'in', ['pending', 'approved'])
        .returning(storeNowColumn(trx, deps.now()).as('store_now'))
        .executeTakeFirst()
      if (!marked) {
        const current = await trx.selectFrom('plans').select('state').where('id', '=', plan.plan_id).executeTakeFirst()
        if (current?.state === 'rejected') throw rejectedPlan(plan.plan_id, plan.selection_id)
        const other = await trx.selectFrom('operations').select('id').where('plan_id', '=', plan.plan_id).where('id', '!=', operationId).executeTakeFirst()
        throw new WarrantError('conflict', `plan "${plan.plan_id}" is already committed${other ? ` as operation ${other.id}` : ''}; a plan is committed once`, { plan_id: plan.plan_id, operation_id: other?.id })
      }
      // The plan's row is this transaction's now (PostgreSQL's row lock; SQLite's write lock): the approval, the
      // selection and the committer checked before must hold as the operation is recorded, read on the store's clock as
      // it is now (an approval or the selection lapses, a reviewer or the committer is disabled, a token revoked, the
      // committer's scope narrowed). On the committing process's own clock, one running slow recorded an operation on
      // an approval that had lapsed for every other instance.
      deps.selections.assertUsable(selection, marked.store_now)
      await assertAuthorityHolds(trx, deps.store.dialect, { plan, committer: actor, reviewersNeeded: committable.reviewers_needed, ttlMinutes: committable.approval_ttl_minutes, now: marked.store_now })
      let afterOrd = -1
      let written = 0
      for (;;) {
        const members = await trx
          .selectFrom('selection_members')
          .select(['ord', 'record_id', 'version', 'fields', 'source'])
          .where('selection_id', '=', selection.selection_id)
          .where('ord', '>', afterOrd)
          .orderBy('ord')
          .limit(LEDGER_CHUNK)
          .execute()
        if (members.length === 0) break
        await trx
          .insertInto('operation_targets')
          .values(
            members.map((m) => ({
              operation_id: operationId,
              ord: m.ord,
              record_id: m.record_id,
              source: m.source,
              expected_version: m.version,
              state: 'pending' as const,
              before: JSON.stringify(pick(JSON.parse(m.fields) as Record<string, unknown>, setFields)),
              after: null,
              upstream_status: null,
              error: null,
              reason: null,
              updated_at: now,
            })),
          )
          .execute()
        written += members.length
        afterOrd = members[members.length - 1]!.ord
      }
      if (written !== selection.count)
        throw new WarrantError('conflict', `selection "${selection.selection_id}" holds ${written} members but says ${selection.count}; nothing was committed`)
    })
  } catch (error) {
    if (!(error instanceof KeyTaken) && !isUniqueViolation(error)) throw error
    const existing = await findOperationByKey(deps.store.db, request.key)
    if (!existing) throw error
    return replay(existing, request.fingerprint, actor)
  }
  return receipt(operationId, 'pending', plan.plan_id, selection.count, true)
}

