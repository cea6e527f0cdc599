import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { readAll } from '../support/read-body.js'
import { openReviewSession } from '../support/review-session.js'
import { openAndStall } from '../support/stalled-client.js'
import { STORE_KINDS } from '../support/stores.js'
import { until } from '../support/until.js'
import { startWideExport, WIDE_COUNT } from './wide-export.js'

/**
 * A client that opens an export, reads its headers and a little of it, then stops reading and holds the connection.
 * Before: no audit row said the export had begun, for as long as the client held it (and never, were the process to
 * die meanwhile). Now the export is in the audit log from its start (`selection.export_started`, whose seq its end
 * row names).
 * On a wide export (wide-export.ts): far more than the sockets buffer.
 */
const COUNT = WIDE_COUNT
const API = 'GET /v1/selections/:id/export'
const STARTED = 'selection.export_started'

for (const kind of STORE_KINDS) {
  describe(`an export a client stops reading (${kind} store, an odd HTTP upstream)`, () => {
    let wide: Awaited<ReturnType<typeof startWideExport>>
    before(async () => void (wide = await startWideExport(kind)))
    after(() => wide?.close())

    /** This selection's audit rows of `action`, oldest first, read straight from the store. */
    const rowsOf = async (action: string) =>
      (await wide.fx.gateway.store.db.selectFrom('audit_events').select(['seq', 'action', 'surface', 'principal', 'summary']).where('selection_id', '=', wide.selectionId).where('action', '=', action).orderBy('seq').execute()).map((r) => ({
        ...r,
        seq: Number(r.seq),
        summary: JSON.parse(r.summary),
      }))
    const apiPath = (format: string) => `/v1/selections/${wide.selectionId}/export?format=${format}`

    test('the export is in the audit log from its start, while the client holds it unread; its end row names that start', async () => {
      const seen = (await rowsOf(STARTED)).length
      const endsSeen = (await rowsOf(API)).length
      const client = await openAndStall(wide.fx.base, apiPath('ndjson'), { authorization: `Bearer ${wide.token}` })
      try {
        assert.match(client.head, /^HTTP\/1\.1 200/)
        // written before the answer's headers left: there as soon as the client has them
        const started = await rowsOf(STARTED)
        assert.equal(started.length, seen + 1)
        const row = started.at(-1)!
        assert.equal(row.surface, 'http')
        assert.ok(row.principal)
        assert.deepEqual(
          { outcome: row.summary.outcome, format: row.summary.format, count: row.summary.count, digest: row.summary.digest, complete: row.summary.complete, path: row.summary.path },
          { outcome: 'started', format: 'ndjson', count: COUNT, digest: wide.digest, complete: true, path: apiPath('ndjson').split('?')[0] },
        )
        client.leave()
        await until(async () => (await rowsOf(API)).length > endsSeen, 'the end row')
        const end = (await rowsOf(API)).at(-1)!
        assert.equal(end.summary.started_seq, row.seq)
        assert.equal(end.principal, row.principal)
        assert.equal(end.summary.manifest.end_reached, false)
      } finally {
        client.leave()
      }
      // the review pages' export link: the same start row, on the ui surface, and its end row names it
      const session = await openReviewSession(wide.fx.base, wide.fx.tokens.reviewer)
      const uiSeen = (await rowsOf('ui:export_manifest')).length
      const ui = await fetch(`${wide.fx.base}/review/selections/${encodeURIComponent(wide.selectionId)}/export?format=csv`, { headers: { cookie: session.cookie } })
      assert.equal((await readAll(ui)).ended, 'clean')
      const uiStart = (await rowsOf(STARTED)).at(-1)!
      assert.deepEqual([uiStart.surface, uiStart.summary.outcome, uiStart.summary.format, uiStart.summary.count], ['ui', 'started', 'csv', COUNT])
      await until(async () => (await rowsOf('ui:export_manifest')).length > uiSeen, 'the ui end row')
      const uiEnd = (await rowsOf('ui:export_manifest')).at(-1)!
      assert.equal(uiEnd.summary.started_seq, uiStart.seq)
      assert.equal(uiEnd.principal, uiStart.principal)
      assert.equal(uiEnd.summary.outcome, 'ok')
    })

    test('a refused export (no such selection) has its refusal row and no start row', async () => {
      const before = (await wide.fx.gateway.store.db.selectFrom('audit_events').select(['seq']).where('action', '=', STARTED).execute()).length
      const res = await fetch(`${wide.fx.base}/v1/selections/sel_nope/export?format=csv`, { headers: { authorization: `Bearer ${wide.token}` } })
      assert.equal(res.status, 404)
      await wide.fx.gateway.audit.flush()
      assert.equal((await wide.fx.gateway.store.db.selectFrom('audit_events').select(['seq']).where('action', '=', STARTED).execute()).length, before)
    })
  })
}
