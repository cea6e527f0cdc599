import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { serve, type ServerType } from '@hono/node-server'
import type { AddressInfo } from 'node:net'
import { createApp } from '../../src/api/index.js'
import { createLogger, openGateway, type Gateway } from '../../src/gateway/index.js'
import { startOddUpstream, thingsResourceConfig, type OddUpstream } from '../plans/support/odd-upstream.js'
import { csvRecords } from '../support/csv-rows.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'

const SECRET = 'sk_live_after_the_fact'

/**
 * A field an operator denies after selections holding it were frozen (it turned out to hold secrets): the frozen
 * members still store its values, but no surface serves them any more: not the export, not the records pages, not
 * the view; the export's first line names the field as withheld.
 */
describe('a field denied after a selection was frozen leaves the gateway no more (an odd http upstream)', () => {
  let up: OddUpstream
  let fx: GatewayFixture
  let later: Gateway
  let server: ServerType
  let base: string
  let selectionId: string
  before(async () => {
    up = await startOddUpstream([{ id: 'leaky', name: 'x', status: 'open', note: SECRET }])
    fx = await startDemoGateway({ store: 'sqlite', count: 20, edit: (c) => void (c.resources.things = thingsResourceConfig(up.origin)) })
    const agent = await fx.gateway.principals.authenticate((await fx.gateway.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })).token, 'http')
    const sel = await fx.gateway.selections.create(agent, 'things', {})
    assert.ok(JSON.stringify(sel.records).includes(SECRET), 'frozen while the field was a review field')
    selectionId = sel.selection_id
    // the operator denies `note`, and the gateway starts again on the same store
    await fx.gateway.audit.flush()
    const config = structuredClone(fx.config) as any
    config.resources.things.denied_fields = ['note']
    config.resources.things.review_fields = ['id', 'name', 'status']
    later = await openGateway({ config, log: createLogger({ level: 'silent' }) })
    const app = createApp({ gateway: later })
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s))
    })
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
    await later?.audit.flush()
    await later?.close()
    await fx?.close()
    await up?.close()
  })
  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${fx.tokens.admin}` } })
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
  })

  test('the view and the records pages hold no value of it', async () => {
    for (const path of [`/v1/selections/${selectionId}`, `/v1/selections/${selectionId}/records?limit=1000`]) assert.ok(!(await get(path)).includes(SECRET), path)
  })
})
