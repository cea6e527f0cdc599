import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { openReviewSession } from '../support/review-session.js'

const STALL_MS = 300

// HEAD on a manifest's export ran the GET: the export was started (its `selection.export_started` row written, the
// stream built and left unread, since a HEAD answer has no body), held until the stall timeout (60 s by default),
// and then logged as a failed export, `client_stalled`: an export nobody asked for, in the log that says who took
// which records. A HEAD now answers the manifest's headers and starts nothing.
describe('HEAD on a manifest export answers its headers and starts no export', () => {
  const env = demoGatewayFor({ store: 'sqlite', count: 50, edit: (raw) => void (raw.server = { ...raw.server, export_stall_timeout_ms: STALL_MS }) })

  const exportRows = async (since: number) => {
    await new Promise((resolve) => setTimeout(resolve, STALL_MS * 3))
    await env.fx.gateway.audit.flush()
    const rows = await env.fx.gateway.store.db.selectFrom('audit_events').select(['action', 'summary']).where('seq', '>', since).where('level', '=', 'run').orderBy('seq').execute()
    return rows.map((r) => [r.action, JSON.parse(r.summary).outcome])
  }
  const lastSeq = async () => {
    await env.fx.gateway.audit.flush()
    const db = env.fx.gateway.store.db
    return Number((await db.selectFrom('audit_events').select(db.fn.max('seq').as('seq')).executeTakeFirst())?.seq ?? 0)
  }

  test('/v1: the same headers as GET, no body, one HEAD row ok, no export started or cut', async () => {
    const selection = await env.fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'past_due' } })
    const id = selection.body.selection_id
    const since = await lastSeq()
    const head = await fetch(`${env.fx.base}/v1/selections/${id}/export?format=ndjson`, { method: 'HEAD', headers: { authorization: `Bearer ${env.fx.tokens.agent}` } })
    assert.equal(head.status, 200)
    assert.equal(head.headers.get('x-warrant-selection-count'), String(selection.body.count))
    assert.equal(head.headers.get('x-warrant-selection-digest'), selection.body.digest)
    assert.equal(head.headers.get('content-type'), 'application/x-ndjson; charset=utf-8')
    assert.deepEqual(await exportRows(since), [['HEAD /v1/selections/:id/export', 'ok']])
    const missing = await fetch(`${env.fx.base}/v1/selections/sel_nope/export`, { method: 'HEAD', headers: { authorization: `Bearer ${env.fx.tokens.agent}` } })
    assert.equal(missing.status, 404)
  })

  test('/review: the same, for a reviewer signed in', async () => {
    const selection = await env.fx.as('agent')('POST', '/v1/resources/subscriptions/selections', { filter: { status: 'active' } })
    const session = await openReviewSession(env.fx.base, env.fx.tokens.reviewer)
    const since = await lastSeq()
    const head = await fetch(`${env.fx.base}/review/selections/${selection.body.selection_id}/export`, { method: 'HEAD', headers: { cookie: session.cookie } })
    assert.equal(head.status, 200)
    assert.equal(head.headers.get('x-warrant-selection-digest'), selection.body.digest)
    const rows = await exportRows(since)
    assert.deepEqual(rows.filter(([action]) => action === 'selection.export_started' || action === 'ui:export_manifest'), [])
  })
})
