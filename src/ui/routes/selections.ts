import type { Hono } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { WarrantError } from '../../contract/index.js'
import type { ActionRequest } from '../../plans/index.js'
import { markRequestAudited } from '../../audit/index.js'
import { EXPORT_STARTED_ACTION, exportOutcome, exportStartedSummary, manifestFile, manifestHeaders } from '../../selections/index.js'
import { paths } from '../components.js'
import { ErrorPage } from '../pages/misc.js'
import { ExcludedPageView, SelectionPage } from '../pages/selection.js'
import { DEFAULT_PAGE_SIZE } from '../selection-parts.js'
import { type Ctx, type ReviewRouteDeps, type UiEnv, fieldTypesOf, html, idFieldOf, reachOf, pageSize } from './context.js'

/** The choices the retry form offers; anything else is refused, so a forged form cannot ask for an hour-long walk plus one. */
const RETRY_DEADLINES_S = [120, 600, 1800, 3600]

/** The retry form's deadline in milliseconds; a choice it does not offer is refused. */
function retryDeadlineMs(field: unknown): number {
  const seconds = Number(field)
  if (!RETRY_DEADLINES_S.includes(seconds)) throw new WarrantError('invalid_request', `the deadline must be one of ${RETRY_DEADLINES_S.join(', ')} seconds`, { field: 'deadline_seconds' })
  return seconds * 1000
}

/** What a repeated recovery choice had already done, as the notice of the page it lands on says it; null for anything else. */
export function alreadyDone(query: string | undefined): string | null {
  return query === 'retry' ? 'retried this inventory' : query === 'recover' ? 'restricted this inventory to the records it returned' : null
}

/** A selection's page, the records an exclusion rule removed, the manifest export, and the recovery choices. */
export function registerSelectionRoutes(ui: Hono<UiEnv>, deps: ReviewRouteDeps): void {
  const { gateway, recordUi } = deps

  ui.get('/selections/:id', async (c) => {
    const viewer = c.get('viewer')
    const id = c.req.param('id')
    const selection = await gateway.selections.view(viewer.actor, id)
    const limit = pageSize(c.req.query('limit'))
    const cursor = c.req.query('m') || undefined
    const page = await gateway.selections.page(viewer.actor, id, { cursor, limit })
    const base = paths.selection(id) + (limit === DEFAULT_PAGE_SIZE ? '' : `?limit=${limit}`)
    const next = page.next_cursor ? `${paths.selection(id)}?${new URLSearchParams({ limit: String(limit), m: page.next_cursor })}#records-manifest` : null
    const notice =
      c.req.query('created') === '1'
        ? { kind: 'ok' as const, title: 'A new selection was created.', text: `Its digest is ${selection.digest}.` }
        : alreadyDone(c.req.query('again'))
          ? { kind: 'info' as const, title: `You had already ${alreadyDone(c.req.query('again'))}; this is that selection, and no second one was made.`, text: `Its digest is ${selection.digest}.` }
          : null
    return html(c, SelectionPage({ viewer, selection, page, nav: { base, limit, paged: cursor !== undefined, next }, types: fieldTypesOf(gateway, selection.resource), idField: idFieldOf(gateway, selection.resource), reach: reachOf(gateway, selection.resource), notice }))
  })

  ui.get('/selections/:id/excluded', async (c) => {
    const viewer = c.get('viewer')
    const id = c.req.param('id')
    const rule = c.req.query('rule') ?? ''
    const cursor = c.req.query('cursor') || undefined
    const selection = await gateway.selections.view(viewer.actor, id)
    const page = await gateway.selections.excluded(viewer.actor, id, { rule, cursor, limit: 100 })
    const base = paths.excluded(id, rule)
    return html(c, ExcludedPageView({ viewer, selection, page, types: fieldTypesOf(gateway, selection.resource), idField: idFieldOf(gateway, selection.resource), reach: reachOf(gateway, selection.resource), base, paged: cursor !== undefined, next: page.next_cursor ? `${base}&cursor=${encodeURIComponent(page.next_cursor)}` : null }))
  })

  ui.get('/selections/:id/export', async (c) => {
    const actor = c.get('viewer').actor
    const id = c.req.param('id')
    const format = c.req.query('format') === 'ndjson' ? 'ndjson' : c.req.query('format') === 'csv' || c.req.query('format') === undefined ? 'csv' : null
    if (!format) throw new WarrantError('invalid_request', 'format must be csv or ndjson', { field: 'format' })
    // HEAD: the headers only; run as the GET, it started an export nobody reads (see the /v1 route)
    if (c.req.method === 'HEAD') {
      const selection = await gateway.selections.view(actor, id)
      return c.body(null, 200, manifestHeaders({ ...manifestFile(selection.selection_id, format), selection }))
    }
    // the row is written when the stream ends, saying how far it got: written now, it would call a cut export a success;
    // a start row before the first byte keeps an export its client holds unread (or its process died in) in the log
    let startedSeq: number | null = null
    const exported = await gateway.selections.exportStream(actor, id, format, (end) =>
      recordUi(actor, 'ui:export_manifest', {
        selection_id: id,
        summary: {
          status: 200,
          outcome: exportOutcome(end),
          format,
          count: exported.selection.count,
          digest: exported.selection.digest,
          answer: { items: end.rows_sent, complete: exported.selection.complete },
          manifest: end,
          ...(startedSeq === null ? {} : { started_seq: startedSeq }),
        },
      }).then(() => undefined),
    )
    markRequestAudited()
    const started = await recordUi(actor, EXPORT_STARTED_ACTION, { selection_id: id, summary: { status: 200, ...exportStartedSummary(exported.selection, format) } })
    startedSeq = (started as { seq?: number } | undefined)?.seq ?? null
    return new Response(exported.stream, {
      status: 200,
      headers: manifestHeaders(exported),
    })
  })

  /**
   * A recovery choice on an incomplete selection: `recover` (restrict to the returned ids) or `retry` (the same
   * selector, a longer deadline). From a plan page, the plan's action is proposed on the new selection.
   */
  async function recovery(c: Ctx, kind: 'recover' | 'retry'): Promise<Response> {
    const actor = c.get('viewer').actor
    const selectionId = c.req.param('id') ?? ''
    const form = await c.req.parseBody()
    const planId = typeof form.plan_id === 'string' && form.plan_id !== '' ? form.plan_id : null
    const back = planId ? paths.plan(planId) : paths.selection(selectionId)
    try {
      let action: ActionRequest | null = null
      if (planId) {
        const plan = await gateway.plans.load(actor, planId)
        if (plan.selection_id !== selectionId) throw new WarrantError('invalid_request', `plan ${planId} is not on selection ${selectionId}`, { field: 'plan_id' })
        action = { type: plan.action.type, params: plan.action.params as Record<string, string | number | boolean> }
      }
      const created =
        kind === 'recover'
          ? await gateway.selections.recover(actor, selectionId)
          : await gateway.selections.retry(actor, selectionId, { deadline_ms: retryDeadlineMs(form.deadline_seconds) })
      await recordUi(actor, `ui:${kind}_selection`, {
        selection_id: created.selection_id,
        plan_id: planId,
        summary: { status: created.created ? 201 : 200, from_selection: selectionId, created: created.created, complete: created.complete, count: created.count },
      })
      // a form sent again (a second tab, back and send again) is handed the first one's answer, and told so
      const again = created.created ? '' : `again=${kind}`
      if (!action) return c.redirect(`${paths.selection(created.selection_id)}?${again || 'created=1'}`, 303)
      const proposal = await gateway.plans.propose(actor, created.selection_id, { action })
      await recordUi(actor, 'ui:propose_plan', { selection_id: created.selection_id, plan_id: proposal.plan_id, summary: { status: proposal.created ? 201 : 200, replaces_plan: planId } })
      return c.redirect(`${paths.plan(proposal.plan_id)}?proposed=1${again && !proposal.created ? `&${again}` : ''}`, 303)
    } catch (error) {
      if (!(error instanceof WarrantError)) throw error
      await recordUi(actor, `ui:${kind}_selection`, { selection_id: selectionId, plan_id: planId, summary: { status: error.status, error: error.code } })
      return html(
        c,
        ErrorPage({
          viewer: c.get('viewer'),
          status: error.status,
          code: error.code,
          title: kind === 'recover' ? 'The recovery was refused' : 'The retry was refused',
          message: `${error.message}. The incomplete selection is unchanged.`,
          back,
        }),
        error.status as ContentfulStatusCode,
      )
    }
  }

  ui.post('/selections/:id/recover', (c) => recovery(c, 'recover'))
  ui.post('/selections/:id/retry', (c) => recovery(c, 'retry'))
}
