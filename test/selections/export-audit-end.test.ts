import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import type { GatewayFixture } from '../support/gateway-fixture.js'
import { readRest } from '../support/read-body.js'
import { openReviewSession } from '../support/review-session.js'
import { STORE_KINDS } from '../support/stores.js'
import { until } from '../support/until.js'
import { startWideExport, WIDE_COUNT } from './wide-export.js'

/**
 * An export's audit row says what the file held: how many member rows were sent, whether the end was reached, and
 * why it stopped (the digest check cut it, the store failed, the client left). Before, the row was written when the
 * stream began, `outcome: "ok"`, whatever happened to it after. On a wide export (wide-export.ts).
 */
const COUNT = WIDE_COUNT

/** Reads `res` until `enough(text)` holds, then stops reading (the connection stays open, the gateway blocked). */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, enough: (text: string) => boolean): Promise<string> {
  const decoder = new TextDecoder()
  let text = ''
  while (!enough(text)) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
  }
  return text
}

/** Member lines of an NDJSON body received whole (the header and end lines are not members). */
const memberLines = (text: string) => text.split('\n').slice(0, -1).filter((l) => !l.includes('"format":"warrant-selection-export/1"')).length

for (const kind of STORE_KINDS) {
  describe(`an export's audit row says how the export ended (${kind} store, an odd HTTP upstream)`, () => {
    let wide: Awaited<ReturnType<typeof startWideExport>>
    let fx: GatewayFixture
    let token: string
    let selectionId: string
    let digest: string
    before(async () => {
      wide = await startWideExport(kind)
      ;({ fx, token, selectionId, digest } = wide)
    })
    after(async () => {
      await wide?.close()
    })

    const exportOf = (format: string, signal?: AbortSignal) => fetch(`${fx.base}/v1/selections/${selectionId}/export?format=${format}`, { headers: { authorization: `Bearer ${token}` }, signal })
    /** The export rows of this selection, newest last, read straight from the store. */
    const exportRows = async (action: string) =>
      (await fx.gateway.store.db.selectFrom('audit_events').select(['seq', 'action', 'summary']).where('selection_id', '=', selectionId).orderBy('seq').execute())
        .filter((r) => r.action === action)
        .map((r) => JSON.parse(r.summary))
    const newRow = async (action: string, before: number) => {
      await until(async () => (await exportRows(action)).length > before, `the ${action} row`)
      return (await exportRows(action)).at(-1)
    }
    const API = 'GET /v1/selections/:id/export'

    test('sent whole: ok, every row sent, the end reached, nothing stopped it', async () => {
      for (const format of ['ndjson', 'csv']) {
        const seen = (await exportRows(API)).length
        const got = await readRest((await exportOf(format)).body!.getReader(), '')
        assert.equal(got.ended, 'clean')
        // written before the last bytes left: there once the body has arrived
        const row = (await exportRows(API)).at(-1)
        assert.equal((await exportRows(API)).length, seen + 1)
        assert.equal(row.outcome, 'ok')
        assert.deepEqual(row.manifest, { format, rows_sent: COUNT, count: COUNT, digest, end_reached: true, stopped: null })
        assert.deepEqual(row.answer, { items: COUNT, complete: true, incomplete: [] })
      }
    })

    test('the client leaves mid-file: client_closed, fewer rows than the count, the end not reached', async () => {
      const seen = (await exportRows(API)).length
      const abort = new AbortController()
      const reader = (await exportOf('ndjson', abort.signal)).body!.getReader()
      const text = await readUntil(reader, (t) => memberLines(t) > 10)
      await new Promise((r) => setTimeout(r, 200))
      abort.abort()
      const row = await newRow(API, seen)
      assert.equal(row.outcome, 'client_closed')
      assert.equal(row.manifest.end_reached, false)
      assert.equal(row.manifest.stopped, 'client_gone')
      assert.ok(row.manifest.rows_sent >= memberLines(text) && row.manifest.rows_sent < COUNT, `rows_sent ${row.manifest.rows_sent}, received ${memberLines(text)}`)
    })

    test('the store fails mid-file (its member table gone): failed, store_error, the rows sent before it, the body cut', async () => {
      const seen = (await exportRows(API)).length
      const reader = (await exportOf('ndjson')).body!.getReader()
      const text = await readUntil(reader, (t) => memberLines(t) > 10)
      // the client stops reading: the gateway fills the sockets and waits, a page or two in
      await new Promise((r) => setTimeout(r, 500))
      await sql`alter table selection_members rename to selection_members_away`.execute(fx.gateway.store.db)
      try {
        const got = await readRest(reader, text)
        assert.equal(got.ended, 'cut')
        assert.ok(!got.text.includes('"end":true'))
        const row = await newRow(API, seen)
        assert.equal(row.outcome, 'failed')
        assert.equal(row.manifest.stopped, 'store_error')
        assert.equal(row.manifest.end_reached, false)
        assert.ok(row.manifest.rows_sent >= 1000 && row.manifest.rows_sent < COUNT && row.manifest.rows_sent % 1000 === 0, `rows_sent ${row.manifest.rows_sent}`)
        assert.ok(memberLines(got.text) <= row.manifest.rows_sent, `received ${memberLines(got.text)} > sent ${row.manifest.rows_sent}`)
      } finally {
        await sql`alter table selection_members_away rename to selection_members`.execute(fx.gateway.store.db)
      }
    })

    test('a member row altered in the store: the digest check cuts the file; failed, digest_mismatch, every row sent but no end', async () => {
      const db = fx.gateway.store.db
      const original = await db.selectFrom('selection_members').select(['version']).where('selection_id', '=', selectionId).where('ord', '=', COUNT).executeTakeFirstOrThrow()
      await db.updateTable('selection_members').set({ version: 'W/"forged"' }).where('selection_id', '=', selectionId).where('ord', '=', COUNT).execute()
      try {
        for (const format of ['ndjson', 'csv']) {
          const seen = (await exportRows(API)).length
          const got = await readRest((await exportOf(format)).body!.getReader(), '')
          assert.equal(got.ended, 'cut')
          const row = await newRow(API, seen)
          assert.equal(row.outcome, 'failed')
          assert.deepEqual(row.manifest, { format, rows_sent: COUNT, count: COUNT, digest, end_reached: false, stopped: 'digest_mismatch', error: 'internal' })
        }
        // the review pages' export link: its own row says the same
        const session = await openReviewSession(fx.base, fx.tokens.reviewer)
        const seen = (await exportRows('ui:export_manifest')).length
        const ui = await fetch(`${fx.base}/review/selections/${encodeURIComponent(selectionId)}/export?format=csv`, { headers: { cookie: session.cookie } })
        assert.equal(ui.status, 200)
        assert.equal((await readRest(ui.body!.getReader(), '')).ended, 'cut')
        const row = await newRow('ui:export_manifest', seen)
        assert.equal(row.outcome, 'failed')
        assert.equal(row.manifest.stopped, 'digest_mismatch')
        assert.equal(row.manifest.end_reached, false)
      } finally {
        await db.updateTable('selection_members').set({ version: original.version }).where('selection_id', '=', selectionId).where('ord', '=', COUNT).execute()
      }
      // put back, the review pages' export is whole again, and says so
      const session = await openReviewSession(fx.base, fx.tokens.reviewer)
      const seen = (await exportRows('ui:export_manifest')).length
      const ui = await fetch(`${fx.base}/review/selections/${encodeURIComponent(selectionId)}/export?format=ndjson`, { headers: { cookie: session.cookie } })
      assert.equal((await readRest(ui.body!.getReader(), '')).ended, 'clean')
      const row = await newRow('ui:export_manifest', seen)
      assert.equal(row.outcome, 'ok')
      assert.deepEqual(row.manifest, { format: 'ndjson', rows_sent: COUNT, count: COUNT, digest, end_reached: true, stopped: null })
      // and the chain holds every one of these rows
      const verify = await fetch(`${fx.base}/v1/audit/verify`, { headers: { authorization: `Bearer ${fx.tokens.admin}` } })
      assert.equal(((await verify.json()) as any).ok, true)
    })
  })
}
