import type { Hono } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { WarrantError } from '../../contract/index.js'
import { paths } from '../components.js'
import { plural, relative } from '../format.js'
import { AuditPage } from '../pages/audit.js'
import type { ChangesPage } from '../../plans/index.js'
import type { QueuePosition } from '../../review/index.js'
import { PlanPage, type PlanPageData } from '../pages/plan.js'
import { QueuePage } from '../pages/queue.js'
import { DEFAULT_PAGE_SIZE } from '../selection-parts.js'
import { type Ctx, type ReviewRouteDeps, type UiEnv, agentWrittenFields, fieldTypesOf, html, idFieldOf, reachOf, writeConfigOf, pageSize } from './context.js'
import { alreadyDone } from './selections.js'

/** The queue of plans waiting for a decision, a plan's page with its decision form, and its audit trail. */
export function registerPlanRoutes(ui: Hono<UiEnv>, deps: ReviewRouteDeps): void {
  const { gateway, recordUi } = deps
  const { queue } = gateway.review

  ui.get('/', async (c) => {
    const actor = c.get('viewer').actor
    const older = queuePositionOf(c.req.query('older'))
    const { plans, more, next } = await queue.awaitingDecision(actor, older ? { older } : {})
    const recent = await queue.recentlyDecided(actor, { limit: 15 })
    const olderLink = more && next ? `${paths.queue}?${new URLSearchParams({ older: Buffer.from(JSON.stringify([next.created_at, next.id])).toString('base64url') })}` : null
    return html(c, QueuePage({ viewer: c.get('viewer'), waiting: plans, more, olderLink, continued: older !== null, recent, reach: (resource) => reachOf(gateway, resource) }))
  })

  async function renderPlan(c: Ctx, planId: string, notice: PlanPageData['notice'], status: ContentfulStatusCode = 200): Promise<Response> {
    const viewer = c.get('viewer')
    const actor = viewer.actor
    const plan = await gateway.plans.view(actor, planId)
    const selection = await gateway.selections.view(actor, plan.selection_id)
    const limit = pageSize(c.req.query('limit'))
    const memberCursor = c.req.query('m') || undefined
    const changesCursor = c.req.query('c') || undefined
    const page = await gateway.selections.page(actor, plan.selection_id, { cursor: memberCursor, limit })
    // The config may have changed since the proposal (the plan view names how); no approval or commit is then taken,
    // so the reviewer is told why, and still sees the plan to reject it.
    let changes: ChangesPage | null = null
    try {
      changes = await gateway.plans.changes(actor, planId, { cursor: changesCursor, limit })
    } catch (error) {
      // the action is gone: what each record would receive cannot be rendered without it
      if (!(error instanceof WarrantError) || error.code !== 'conflict' || !plan.config_drift.some((d) => d.code === 'action_removed')) throw error
    }
    const configChanged: PlanPageData['configChanged'][number][] = plan.config_drift.map((d) => ({
      code: d.code,
      text: `${d.message}: it can be rejected, not approved or committed while the config differs; an approval given before does not count again if the config is put back${d.code === 'action_removed' ? '; what each record would receive can no longer be shown' : ''}.`,
    }))
    const base = paths.plan(planId) + (limit === DEFAULT_PAGE_SIZE ? '' : `?limit=${limit}`)
    const next = page.next_cursor
      ? `${paths.plan(planId)}?${new URLSearchParams({ limit: String(limit), m: page.next_cursor, ...(changes?.next_cursor ? { c: changes.next_cursor } : {}) })}#records-manifest`
      : null
    let shown = notice ?? null
    const decided = c.req.query('decided')
    if (!shown && (decided === 'approve' || decided === 'reject')) {
      const mine = plan.approvals.filter((a) => a.principal === actor.principal && a.decision === decided).at(-1)
      if (mine)
        shown =
          decided === 'reject'
            ? { kind: 'ok', title: 'Your rejection is recorded.', text: 'The plan takes no more decisions and cannot be committed.' }
            : {
                // The URL outlives the decision (a reload, the history): what follows is read from the plan as it is now.
                kind: plan.state === 'approved' || plan.state === 'pending' ? 'ok' : 'warn',
                title:
                  c.req.query('again') === '1'
                    ? `You had already approved this plan at ${mine.decided_at}; nothing new was recorded and it still counts once.`
                    : 'Your approval is recorded.',
                text: `It is bound to plan digest ${mine.plan_digest} and ${mine.valid ? 'valid' : 'no longer counts; it was valid'} until ${mine.expires_at ?? '—'} (${relative(mine.expires_at, viewer.now)}). ${
                  plan.state === 'approved'
                    ? 'The plan is approved: the agent may commit it.'
                    : plan.state === 'pending'
                      ? `${plural(plan.approval_state.still_needed, 'more distinct reviewer')} must approve.`
                      : `The plan is now ${plan.state}: nothing more can be committed on this approval.`
                }`,
              }
    }
    if (!shown && c.req.query('proposed') === '1' && plan.proposed_by === actor.principal)
      shown =
        alreadyDone(c.req.query('again'))
          ? { kind: 'info', title: `You had already ${alreadyDone(c.req.query('again'))}; this is the plan made then, and no second plan was made.`, text: `It is ${plan.state}.` }
          : { kind: 'info', title: 'You proposed this plan.', text: 'It waits in the queue; another reviewer must approve it.' }
    return html(
      c,
      PlanPage({
        viewer,
        plan,
        selection,
        page,
        changes,
        configChanged,
        nav: { base, limit, paged: memberCursor !== undefined, next },
        types: fieldTypesOf(gateway, plan.resource),
        idField: idFieldOf(gateway, plan.resource),
        reach: reachOf(gateway, plan.resource),
        write: writeConfigOf(gateway, plan),
        agentFields: agentWrittenFields(gateway, plan),
        operations: await queue.operationsOf(actor, planId),
        deliveries: await gateway.notifications.deliveries({ plan_id: planId }),
        notificationsEnabled: gateway.notifications.enabled,
        notice: shown,
      }),
      status,
    )
  }

  ui.get('/plans/:id', (c) => renderPlan(c, c.req.param('id'), null))

  ui.post('/plans/:id/decision', async (c) => {
    const planId = c.req.param('id')
    const actor = c.get('viewer').actor
    const form = await c.req.parseBody()
    const decision = form.decision === 'approve' || form.decision === 'reject' ? form.decision : null
    if (!decision) throw new WarrantError('invalid_request', 'the form must say approve or reject', { field: 'decision' })
    const digest = typeof form.plan_digest === 'string' ? form.plan_digest : ''
    // A form sends each line break of a textarea as CR LF, while its maxlength counted it once: read as typed, a
    // comment the textarea took whole is never over the limit. One over it is the service's refusal (nothing is
    // recorded), never cut here: a cut comment was recorded without its last words, and the page said nothing.
    const typed = typeof form.comment === 'string' ? form.comment.replace(/\r\n?/g, '\n').trim() : ''
    const comment = typed === '' ? undefined : typed
    try {
      // The same service call as POST /v1/plans/{id}/approvals: the same refusals (incomplete, expired, changed).
      const result = await gateway.plans.decide(actor, planId, { decision, expected_plan_digest: digest, ...(comment === undefined ? {} : { comment }) })
      await recordUi(actor, `ui:${decision}`, {
        plan_id: planId,
        selection_id: result.selection_id,
        summary: { status: result.counted || decision === 'reject' ? 201 : 200, plan_state: result.plan_state, still_needed: result.still_needed, target_count: result.target_count, environment: result.environment },
        details: { decision, decided_by: actor.principal, comment: comment ?? null, plan_digest: result.plan_digest, approval_id: result.approval_id, expires_at: result.expires_at },
      })
      // A second tab or a repeated click approves nothing new: the page says that approval is the one that stands.
      return c.redirect(`${paths.plan(planId)}?decided=${decision}${decision === 'approve' && !result.counted ? '&again=1' : ''}#decision`, 303)
    } catch (error) {
      if (!(error instanceof WarrantError)) throw error
      await recordUi(actor, `ui:${decision}`, {
        plan_id: planId,
        summary: { status: error.status, error: error.code },
        details: { attempted_decision: decision, expected_plan_digest: digest },
      })
      if (error.code === 'not_found' || error.code === 'forbidden') throw error
      return renderPlan(
        c,
        planId,
        { kind: 'error', title: `Your ${decision === 'approve' ? 'approval' : 'rejection'} was refused; nothing was recorded.`, text: error.message, code: error.code },
        error.status as ContentfulStatusCode,
      )
    }
  })

  ui.get('/plans/:id/audit', async (c) => {
    const viewer = c.get('viewer')
    const planId = c.req.param('id')
    const plan = await gateway.plans.view(viewer.actor, planId)
    const operations = await queue.operationsOf(viewer.actor, planId)
    const LIMIT = 500
    // successful reads left out (counted): every view of the plan or an operation is a row under its id, and 500 of
    // them (an open operation page polls every 2 s) pushed the approvals, the halt and the end off this page
    const run = { level: 'run', limit: LIMIT, without_reads: true } as const
    const pages = [
      await gateway.audit.query({ selection_id: plan.selection_id, ...run }),
      await gateway.audit.query({ plan_id: planId, ...run }),
      ...(await Promise.all(operations.map((o) => gateway.audit.query({ operation_id: o.operation_id, ...run })))),
    ]
    const bySeq = new Map(pages.flatMap((p) => p.events).map((e) => [e.seq, e]))
    const runEvents = [...bySeq.values()].sort((a, b) => a.seq - b.seq)
    const chosen = operations.find((o) => o.operation_id === c.req.query('operation')) ?? operations[0]
    let calls: Parameters<typeof AuditPage>[0]['calls'] = null
    if (chosen) {
      const after = /^\d{1,15}$/.test(c.req.query('after') ?? '') ? Number(c.req.query('after')) : undefined
      const page = await gateway.audit.query({ operation_id: chosen.operation_id, level: 'call', limit: 200, ...(after === undefined ? {} : { after_seq: after }) })
      const here = `${paths.planAudit(planId)}?operation=${encodeURIComponent(chosen.operation_id)}`
      calls = { operationId: chosen.operation_id, events: page.events, next: page.next_cursor === null ? null : `${here}&after=${page.next_cursor}#calls`, first: after === undefined ? null : `${here}#calls` }
    }
    return html(c, AuditPage({ viewer, plan, reach: reachOf(gateway, plan.resource), operations, runEvents, runTruncated: pages.some((p) => p.next_cursor !== null), readsLeftOut: readsLeftOut(pages.map((p) => p.reads_left_out)), calls }))
  })
}

/**
 * The successful reads the run-level listings left out: a row can name the selection, the plan and an operation at
 * once, so the three listings' counts may count one read more than once; the sum is then said as "at most".
 */
function readsLeftOut(counts: readonly ({ readonly count: number } | undefined)[]): { readonly count: number; readonly exact: boolean } {
  const nonzero = counts.filter((c) => (c?.count ?? 0) > 0)
  return { count: nonzero.reduce((n, c) => n + c!.count, 0), exact: nonzero.length <= 1 }
}

/**
 * The queue's `older` parameter: where an earlier listing stopped, as the queue's own link wrote it (base64url of
 * `[created_at, id]`); null without one. Anything else is refused, naming the parameter: it would list from nowhere.
 */
function queuePositionOf(value: string | undefined): QueuePosition | null {
  if (value === undefined || value === '') return null
  let parsed: unknown = null
  try {
    parsed = /^[A-Za-z0-9_-]{1,600}$/.test(value) ? JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) : null
  } catch {
    parsed = null
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !parsed.every((part) => typeof part === 'string' && part !== ''))
    throw new WarrantError('invalid_request', 'the parameter "older" is not a position this page gave; follow the queue\'s own link to the older plans, or open the queue without it', { parameter: 'older' })
  return { created_at: parsed[0], id: parsed[1] }
}
