import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createListDigest } from '../../src/contract/index.js'
import { startThingsGateway } from '../plans/support/odd-upstream.js'
import { csvRecords } from '../support/csv-rows.js'
import type { GatewayFixture } from '../support/gateway-fixture.js'

/**
 * An export is a list that leaves the gateway: the file itself (not only the HTTP headers, lost once it is
 * saved) says whether the selection is complete and why not, what the exclusion rules left out, and the count
 * and digest its members must hash to; an NDJSON file ends with a line that says it ended.
 */
describe('a selection export says, in the file, what it is (an odd http upstream)', () => {
  let things: Awaited<ReturnType<typeof startThingsGateway>>
  let fx: GatewayFixture
  let token: string
  const select = async (body: unknown) => {
    const res = await fetch(`${fx.base}/v1/resources/things/selections`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    assert.equal(res.status, 201)
    return (await res.json()) as any
  }
  const exported = async (id: string, format: string) => {
    const res = await fetch(`${fx.base}/v1/selections/${id}/export?format=${format}`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(res.status, 200)
    return res.text()
  }
  const closedRule = [{ rule: 'closed', filter: { status: 'closed' } }]

  before(async () => {
    things = await startThingsGateway([{ id: 'gone', name: 'x', status: 'closed', note: 'n' }])
    ;({ fx, token } = things)
  })
  after(async () => {
    await things?.close()
  })

  test('NDJSON: a first line with the facts (incomplete, its reasons, the exclusions), the members, and an end line with rows and digest', async () => {
    const sel = await select({ exclude: closedRule, budget: { max_items: 4 }, page_size: 2 })
    assert.equal(sel.complete, false)
    const lines = (await exported(sel.selection_id, 'ndjson')).split('\n')
    assert.equal(lines.pop(), '', 'every line ends in \\n')
    const head = JSON.parse(lines.shift()!)
    const end = JSON.parse(lines.pop()!)
    assert.equal(head.format, 'warrant-selection-export/1')
    assert.equal(head.selection_id, sel.selection_id)
    assert.equal(head.complete, false)
    assert.deepEqual(head.incomplete_reasons.map((r: any) => r.code), ['CLIENT_LIMIT_REACHED'])
    assert.deepEqual(head.exclusions.map((e: any) => [e.rule, e.count]), [['closed', 0]])
    assert.equal(head.count, sel.count)
    assert.equal(head.digest, sel.digest)
    assert.deepEqual(end, { format: 'warrant-selection-export/1', end: true, rows: sel.count, digest: sel.digest })
    const digest = createListDigest()
    for (const line of lines) digest.add({ id: JSON.parse(line).id, version: JSON.parse(line).version })
    assert.equal(lines.length, sel.count)
    assert.equal(digest.finish(), head.digest, 'the member lines hash to the digest the file names')
  })

  test('NDJSON of a complete selection: complete true, the record an exclusion rule removed counted and not among the lines', async () => {
    const sel = await select({ exclude: closedRule })
    assert.equal(sel.complete, true)
    const lines = (await exported(sel.selection_id, 'ndjson')).trim().split('\n').map((l) => JSON.parse(l))
    const head = lines.shift()
    assert.equal(head.complete, true)
    assert.deepEqual(head.incomplete_reasons, [])
    assert.deepEqual(head.exclusions.map((e: any) => [e.rule, e.count, e.records_url]), [['closed', 1, `/v1/selections/${sel.selection_id}/excluded?rule=closed`]])
    assert.equal(lines.pop().end, true)
    assert.ok(!lines.some((l) => l.id === 'gone'))
  })

  test('CSV: every row says whether the selection is complete, why not, what was excluded, its count and digest', async () => {
    const sel = await select({ exclude: closedRule, budget: { max_items: 4 }, page_size: 2 })
    const rows = csvRecords(await exported(sel.selection_id, 'csv'))
    assert.equal(rows.length, sel.count)
    const digest = createListDigest()
    for (const row of rows) {
      assert.equal(row.selection_complete, 'false')
      assert.match(row.selection_incomplete_reasons!, /CLIENT_LIMIT_REACHED \(max_items=4\)/)
      assert.equal(row.selection_excluded, 'closed=0')
      assert.equal(row.selection_count, String(sel.count))
      assert.equal(row.selection_digest, sel.digest)
      digest.add({ id: row.id, version: row.frozen_version })
    }
    assert.equal(digest.finish(), sel.digest, 'the id and frozen_version columns hash to the digest the rows name')

    const whole = await select({ exclude: closedRule })
    const all = csvRecords(await exported(whole.selection_id, 'csv'))
    assert.equal(all.length, whole.count)
    assert.ok(all.every((r) => r.selection_complete === 'true' && r.selection_incomplete_reasons === '' && r.selection_excluded === 'closed=1'))
  })
})
