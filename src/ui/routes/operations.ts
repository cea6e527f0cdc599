import type { Hono } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { type Actor, WarrantError } from '../../contract/index.js'
import type { TargetState } from '../../operations/index.js'
import { paths } from '../components.js'
import { OPERATION_AUDIT_ROWS, type OperationAuditData } from '../operation-audit.js'
import { FINISHED, OUTCOME_FILTERS, OperationPage, type OperationPageData, pausedText, rateLimitedText } from '../pages/operation.js'
import { type Ctx, type ReviewRouteDeps, type UiEnv, fieldTypesOf, html, reachOf, writeConfigOf } from './context.js'

/** An operation's page, the status its live counts poll, and proposing its compensation or its rest. */
export function registerOperationRoutes(ui: Hono<UiEnv>, deps: ReviewRouteDeps): void {
  const { gateway, recordUi } = deps

  async function renderOperation(c: Ctx, operationId: string, notice: OperationPageData['notice'], status: ContentfulStatusCode = 200): Promise<Response> {
    const viewer = c.get('viewer')
    const operation = await gateway.operations.get(viewer.actor, operationId)
    const requested = c.req.query('outcome')
    const outcome = requested && (OUTCOME_FILTERS as readonly string[]).includes(requested) ? (requested as TargetState) : null
    const cursor = c.req.query('cursor') || undefined
    const results = await gateway.operations.results(viewer.actor, operationId, { ...(outcome ? { outcome } : {}), ...(cursor ? { cursor } : {}), limit: 100 })
    let plan = null
    try {
      plan = await gateway.plans.view(viewer.actor, operation.plan_id)
    } catch (error) {
      if (!(error instanceof WarrantError)) throw error
    }
    const base = paths.operation(operationId)
    const next = results.next_cursor ? `${base}?${new URLSearchParams({ ...(outcome ? { outcome } : {}), cursor: results.next_cursor })}#targets` : null
    const audit = await auditOf(operationId, base, c.req.query('audit_before'), c.req.query('audit_reads'))
    return html(
      c,
      OperationPage({ viewer, operation, plan, write: plan ? writeConfigOf(gateway, plan) : null, results, outcome, base, paged: cursor !== undefined, next, types: fieldTypesOf(gateway, operation.resource), reach: reachOf(gateway, operation.resource), notice, audit }),
      status,
    )
  }

  /**
   * The operation's newest audit rows, or those before `before` (a seq the page's "Older rows" link gave); its
   * successful reads left out and counted unless `reads` is `1` (every link keeps the setting).
   */
  async function auditOf(operationId: string, base: string, before: string | undefined, reads: string | undefined): Promise<OperationAuditData> {
    // refused, not read as the newest rows: a page headed "older" or "newest" must be the one asked for
    if (before !== undefined && !/^[1-9]\d{0,14}$/.test(before))
      throw new WarrantError('invalid_request', 'audit_before must be a row\'s seq, a whole number from 1, as the "Older rows" link gives it', { field: 'audit_before' })
    // refused, not read as "leave them out": a page said to list the reads must list them
    if (reads !== undefined && reads !== '1') throw new WarrantError('invalid_request', 'audit_reads must be 1 (list the successful reads too) or absent (leave them out)', { field: 'audit_reads' })
    const withReads = reads === '1'
    const beforeSeq = before === undefined ? undefined : Number(before)
    const page = await gateway.audit.query({
      operation_id: operationId,
      newest_first: true,
      limit: OPERATION_AUDIT_ROWS,
      without_reads: !withReads,
      ...(beforeSeq === undefined ? {} : { before_seq: beforeSeq }),
    })
    const link = (params: { audit_before?: number; audit_reads: boolean }) => {
      const query = new URLSearchParams({ ...(params.audit_before === undefined ? {} : { audit_before: String(params.audit_before) }), ...(params.audit_reads ? { audit_reads: '1' } : {}) }).toString()
      return `${base}${query ? `?${query}` : ''}#audit`
    }
    return {
      events: page.events,
      older: page.next_cursor === null ? null : link({ audit_before: page.next_cursor, audit_reads: withReads }),
      newest: beforeSeq === undefined ? null : link({ audit_reads: withReads }),
      reads: page.reads_left_out
        ? { shown: false, left_out: page.reads_left_out, toggle: link({ ...(beforeSeq === undefined ? {} : { audit_before: beforeSeq }), audit_reads: true }) }
        : { shown: true, toggle: link({ ...(beforeSeq === undefined ? {} : { audit_before: beforeSeq }), audit_reads: false }) },
    }
  }

  ui.get('/operations/:id', (c) => renderOperation(c, c.req.param('id'), null))

  ui.get('/operations/:id/status', async (c) => {
    const view = await gateway.operations.get(c.get('viewer').actor, c.req.param('id'))
    // paused_text: the pause as the page shows it, revealed here by the one function every page uses
    return c.json({ ...view, finished: FINISHED.has(view.state), paused_text: pausedText(view.paused), rate_limited_text: rateLimitedText(view) })
  })

  /**
   * The two proposals an operation's page offers: its compensation and "propose the rest". Each is the service call
   * its /v1 route makes, recorded on the run level as the page's own action (the proposal and a refusal alike); a
   * proposal redirects to the plan's page (asked again, the same plan), a refusal shows the page with the message.
   */
  const PROPOSALS = {
    compensation: { propose: (actor: Actor, id: string) => gateway.operations.proposeCompensation(actor, id), action: 'ui:propose_compensation', refused: 'The compensation was not proposed.' },
    remainder: { propose: (actor: Actor, id: string) => gateway.operations.proposeRemainder(actor, id), action: 'ui:propose_remainder', refused: 'The rest was not proposed.' },
  } as const
  for (const [path, p] of Object.entries(PROPOSALS)) {
    ui.post(`/operations/:id/${path}`, async (c) => {
      const actor = c.get('viewer').actor
      const operationId = c.req.param('id')
      try {
        const proposal = (await p.propose(actor, operationId)) as { plan_id: string; created?: boolean; target_count?: number }
        await recordUi(actor, p.action, { operation_id: operationId, plan_id: proposal.plan_id, summary: { status: proposal.created === false ? 200 : 201, target_count: proposal.target_count ?? null } })
        return c.redirect(`${paths.plan(proposal.plan_id)}?proposed=1`, 303)
      } catch (error) {
        if (!(error instanceof WarrantError)) throw error
        await recordUi(actor, p.action, { operation_id: operationId, summary: { status: error.status, error: error.code } })
        if (error.code === 'not_found' || error.code === 'forbidden') throw error
        return renderOperation(c, operationId, { kind: 'error', title: p.refused, text: error.message, code: error.code }, error.status as ContentfulStatusCode)
      }
    })
  }
}
