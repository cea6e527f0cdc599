import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { after, before, describe, test } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { parseConfigInput, problemKeys } from '../support/config-input.js'
import { readAll } from '../support/read-body.js'
import { openReviewSession } from '../support/review-session.js'
import { openAndStall } from '../support/stalled-client.js'
import { STORE_KINDS } from '../support/stores.js'
import { until } from '../support/until.js'
import { startWideExport, WIDE_COUNT } from './wide-export.js'

/**
 * A client that opens an export, reads its headers and a little of it, then stops reading and holds the connection.
 * Before: no audit row said the export had begun, for as long as the client held it (and never, were the process to
 * die meanwhile), and the gateway held two store pages of it (~12 MB here) and the socket for as long as the client
 * wished. Now the export is in the audit log from its start (`selection.export_started`, whose seq its end row names),
 * and a client that reads nothing for `server.export_stall_timeout_ms` is cut: its end row says `client_stalled`.
 * On a wide export (wide-export.ts): far more than the sockets buffer.
 */
const COUNT = WIDE_COUNT
/** the stall timeout these gateways run with: short, so a test waits for its state, not a minute */
const STALL_MS = 1000
const API = 'GET /v1/selections/:id/export'
const STARTED = 'selection.export_started'

for (const kind of STORE_KINDS) {
  describe(`an export a client stops reading (${kind} store, an odd HTTP upstream)`, () => {
    let wide: Awaited<ReturnType<typeof startWideExport>>
    before(async () => void (wide = await startWideExport(kind, (c) => void (c.server = { ...c.server, export_stall_timeout_ms: STALL_MS }))))
    after(() => wide?.close())

    /** This selection's audit rows of `action`, oldest first, read straight from the store. */
    const rowsOf = async (action: string, selectionId = wide.selectionId) =>
      (await wide.fx.gateway.store.db.selectFrom('audit_events').select(['seq', 'action', 'surface', 'principal', 'summary']).where('selection_id', '=', selectionId).where('action', '=', action).orderBy('seq').execute()).map((r) => ({
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
    /** No store read is left open by the export: a SQLite checkpoint is not held back, no PostgreSQL session is in a transaction. */
    const assertNoStoreReadHeld = async () => {
      const store = wide.fx.gateway.store
      if (store.sqlite) {
        const [result] = store.sqlite.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[]
        assert.equal(result!.busy, 0)
      } else {
        const held = await sql<{ state: string }>`select state from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and (xact_start is not null or backend_xmin is not null)`.execute(store.db)
        assert.deepEqual(held.rows, [])
      }
    }

    for (const surface of ['http', 'ui'] as const)
      test(`a client that reads nothing for the stall timeout is cut (${surface}): its socket closed, the end row client_stalled, never ok`, async () => {
        const endAction = surface === 'http' ? API : 'ui:export_manifest'
        const ends = (await rowsOf(endAction)).length
        const headers: Record<string, string> = surface === 'http' ? { authorization: `Bearer ${wide.token}` } : { cookie: (await openReviewSession(wide.fx.base, wide.fx.tokens.reviewer)).cookie }
        const path = surface === 'http' ? apiPath('ndjson') : `/review/selections/${encodeURIComponent(wide.selectionId)}/export?format=ndjson`
        const client = await openAndStall(wide.fx.base, path, headers)
        try {
          assert.match(client.head, /^HTTP\/1\.1 200/)
          assert.ok(wide.fx.serverSocket(client.localPort), 'the server holds the connection')
          // while it holds the export, the gateway holds no store read for it (each page is its own statement)
          await assertNoStoreReadHeld()
          await until(async () => (await rowsOf(endAction)).length > ends, 'the end row of the stalled export')
          const end = (await rowsOf(endAction)).at(-1)!
          const start = (await rowsOf(STARTED)).at(-1)!
          assert.equal(end.summary.started_seq, start.seq)
          assert.equal(end.summary.outcome, 'failed')
          assert.equal(end.summary.manifest.stopped, 'client_stalled')
          assert.equal(end.summary.manifest.end_reached, false)
          assert.ok(end.summary.manifest.rows_sent < COUNT, `rows_sent ${end.summary.manifest.rows_sent}`)
          // the gateway let go of the connection (and what its buffers held), though the client never closed it
          await until(() => wide.fx.serverSocket(client.localPort) === undefined, 'the server closing the stalled connection')
          await assertNoStoreReadHeld()
        } finally {
          client.leave()
        }
        // no second end row when the socket goes: the export ended once
        await wide.fx.gateway.audit.flush()
        assert.equal((await rowsOf(endAction)).length, ends + 1)
      })

    test('a client that stalls on the last page (here the only one) is recorded client_stalled, never ok', async () => {
      // 999 members of ~24 KB, one store page (the last), far more than the sockets take in: before, the end row was
      // written `ok` as soon as that page was read, whether or not the client ever took it
      const ids = [...wide.up.things.keys()].filter((id) => id.startsWith('t,')).slice(0, 999)
      const names = new Map(ids.map((id) => [id, wide.up.things.get(id)!.name]))
      for (const id of ids) Object.assign(wide.up.things.get(id)!, { status: 'closed', name: `${id} ${'ж'.repeat(12_000)}` })
      try {
        const res = await fetch(`${wide.fx.base}/v1/resources/things/selections`, { method: 'POST', headers: { authorization: `Bearer ${wide.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ filter: { status: 'closed' } }) })
        const sel = (await res.json()) as any
        assert.equal(sel.count, 999, JSON.stringify(sel).slice(0, 300))
        const client = await openAndStall(wide.fx.base, `/v1/selections/${sel.selection_id}/export?format=csv`, { authorization: `Bearer ${wide.token}` })
        try {
          await until(async () => (await rowsOf(API, sel.selection_id)).length > 0, 'the end row of the stalled export')
          const end = (await rowsOf(API, sel.selection_id)).at(-1)!
          assert.equal(end.summary.outcome, 'failed')
          assert.deepEqual([end.summary.manifest.stopped, end.summary.manifest.end_reached], ['client_stalled', false])
          assert.ok(end.summary.manifest.rows_sent < 999, `rows_sent ${end.summary.manifest.rows_sent}`)
        } finally {
          client.leave()
        }
      } finally {
        for (const id of ids) Object.assign(wide.up.things.get(id)!, { status: 'open', name: names.get(id) })
      }
    })

    test('a client that reads the whole file is not cut, whatever the stall timeout: ok, the end reached', async () => {
      const ends = (await rowsOf(API)).length
      const got = await readAll(await fetch(`${wide.fx.base}${apiPath('csv')}`, { headers: { authorization: `Bearer ${wide.token}` } }))
      assert.equal(got.ended, 'clean')
      const end = (await rowsOf(API)).at(-1)!
      assert.equal((await rowsOf(API)).length, ends + 1)
      assert.equal(end.summary.outcome, 'ok')
      assert.deepEqual([end.summary.manifest.rows_sent, end.summary.manifest.end_reached, end.summary.manifest.stopped], [COUNT, true, null])
    })
  })
}

test('server.export_stall_timeout_ms is a whole number of milliseconds from 100 to 3600000; anything else is refused naming the key', () => {
  for (const value of [50, 3_600_001, 1.5, '60s']) {
    const input = parseConfigInput()
    input.server = { export_stall_timeout_ms: value }
    assert.deepEqual(problemKeys(() => parseConfig(input)), ['server.export_stall_timeout_ms'], String(value))
  }
  const input = parseConfigInput()
  input.server = { export_stall_timeout_ms: 100 }
  assert.equal(parseConfig(input).server.export_stall_timeout_ms, 100)
})
