import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createLogger, openGateway, type Gateway } from '../../src/gateway/index.js'
import { startThingsGateway } from '../plans/support/odd-upstream.js'
import { csvRecords } from '../support/csv-rows.js'
import { serveGateway, type GatewayFixture } from '../support/gateway-fixture.js'

const SECRET = 'sk_live_after_the_fact'

/**
 * A field an operator denies after selections holding it were frozen (it turned out to hold secrets): the frozen
 * members still store its values, but no surface serves them any more: not the export, not the records pages, not
 * the view; the export's first line names the field as withheld.
 */
describe('a field denied after a selection was frozen leaves the gateway no more (an odd http upstream)', () => {
  let things: Awaited<ReturnType<typeof startThingsGateway>>
  let fx: GatewayFixture
  let later: Gateway
  let served: Awaited<ReturnType<typeof serveGateway>> | undefined
  let selectionId: string
  before(async () => {
    things = await startThingsGateway([{ id: 'leaky', name: 'x', status: 'open', note: SECRET }])
    fx = things.fx
    const agent = await fx.gateway.principals.authenticate(things.token, 'http')
    const sel = await fx.gateway.selections.create(agent, 'things', {})
    assert.ok(JSON.stringify(sel.records).includes(SECRET), 'frozen while the field was a review field')
    selectionId = sel.selection_id
    // the operator denies `note`, and the gateway starts again on the same store
    await fx.gateway.audit.flush()
    const config = structuredClone(fx.config) as any
    config.resources.things.denied_fields = ['note']
    config.resources.things.review_fields = ['id', 'name', 'status']
    later = await openGateway({ config, log: createLogger({ level: 'silent' }) })
    served = await serveGateway(later)
  })
  after(async () => {
    await served?.stop()
    await later?.audit.flush()
    await later?.close()
    await things?.close()
  })
  const get = async (path: string) => {
    const res = await fetch(`${served!.base}${path}`, { headers: { authorization: `Bearer ${fx.tokens.admin}` } })
    assert.equal(res.status, 200, path)
    return res.text()
  }

  test('NDJSON and CSV exports hold no value of it, and the NDJSON names it withheld', async () => {
    const nd = await get(`/v1/selections/${selectionId}/export?format=ndjson`)
    assert.ok(!nd.includes(SECRET), nd)
    const head = JSON.parse(nd.split('\n')[0]!)
    assert.deepEqual(head.fields, ['id', 'name', 'status'])
    assert.deepEqual(head.withheld_fields, ['note'])
    const csv = await get(`/v1/selections/${selectionId}/export?format=csv`)
    assert.ok(!csv.includes(SECRET), csv)
    assert.ok(!('note' in csvRecords(csv)[0]!))
    // the CSV says the column is missing because it is withheld now, not because it was never there
    assert.ok(csvRecords(csv).every((r) => r.selection_withheld_fields === 'note'))
  })

  test('the view and the records pages hold no value of it', async () => {
    for (const path of [`/v1/selections/${selectionId}`, `/v1/selections/${selectionId}/records?limit=1000`]) assert.ok(!(await get(path)).includes(SECRET), path)
  })
})
