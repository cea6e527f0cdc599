import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Actor } from '../../src/contract/index.js'
import type { GatewayFixture } from '../support/gateway-fixture.js'
import type { Caller } from '../operations/support/flow.js'
import { STORE_KINDS } from '../support/stores.js'
import { startWithResources } from './support/upstream-exec.js'
import { startThingsGateway, type Thing } from './support/odd-upstream.js'

/**
 * A `string` version field that holds a business value (a plan name repeated over the rows) is judged by `warrant
 * check` alone; an operator who never ran it proposed, approved and committed plans whose every sql write set that
 * column to a fresh UUID (overwriting the business value, unapproved) and whose precondition on it never told a stale
 * write apart. A proposal now judges the frozen versions by the same rule (counted in the store): a 409 naming the
 * field, the members and distinct versions, and the fix; nothing stored. A real etag-like text version, counters kept
 * as text, and a selection too small to judge propose as before. Each engine both as the store and the upstream;
 * and one HTTP resource whose version is read from a field (a PATCH with If-Match of a business value is as wrong).
 */
const ROWS = 30

const TABLES: Record<string, (i: number) => string> = {
  // three plan names over 30 rows: 10 members per distinct value, the rule's edge (at least ten per value trips it)
  business: (i) => ['gold', 'silver', 'bronze'][i % 3]!,
  // each row its own etag-like text
  etags: (i) => `e-${(i * 7919).toString(36)}-${i}`,
  // a counter kept as text, every row still at its first value
  counters: () => '1',
  // a timestamp kept as text, every row loaded at one instant
  times: () => '2024-06-01T12:00:00.000Z',
}

const resource = (config: Record<string, any>, table: string) => ({
  environment: config.resources.subscriptions.environment,
  connector: { kind: 'sql', url: config.resources.subscriptions.connector.url, table },
  fields: { id: 'string', rev: 'string', name: 'string' },
  id_field: 'id',
  version_field: 'rev',
  review_fields: ['id', 'name'],
  actions: { rename: { description: 'rename', params: { name: { type: 'string' } }, set: { name: '{{params.name}}' } } },
})

for (const kind of STORE_KINDS) {
  describe(`a string version field holding a business value is refused at proposal (${kind} store and upstream)`, () => {
    let env: Awaited<ReturnType<typeof startWithResources>> | undefined
    let fx: GatewayFixture
    let agent: Caller
    before(async () => {
      env = await startWithResources(kind, 'versions-agent', Object.fromEntries([...Object.keys(TABLES), 'few'].map((name) => [name, (config) => resource(config, name)])))
      ;({ fx, agent } = env)
      const { upstream } = env
      for (const [name, rev] of Object.entries(TABLES)) {
        await upstream.exec(`create table ${name} (id varchar(10) primary key, rev varchar(40) not null, name varchar(10))`)
        await upstream.exec(`insert into ${name} (id, rev, name) values ${Array.from({ length: ROWS }, (_, i) => `('r${String(i).padStart(3, '0')}', '${rev(i)}', 'n')`).join(', ')}`)
      }
      // fewer rows than a judgement needs (19 of 20), every one holding the same plan name
      await upstream.exec('create table few (id varchar(10) primary key, rev varchar(40) not null, name varchar(10))')
      await upstream.exec(`insert into few (id, rev, name) values ${Array.from({ length: 19 }, (_, i) => `('r${i}', 'gold', 'n')`).join(', ')}`)
    })
    after(async () => {
      await env?.close()
    })

    const plansOn = async (selectionId: string) => (await fx.gateway.store.db.selectFrom('plans').select('id').where('selection_id', '=', selectionId).execute()).length
    const propose = async (table: string) => {
      const sel = await agent('POST', `/v1/resources/${table}/selections`, { filter: { name: 'n' } })
      assert.equal(sel.status, 201, JSON.stringify(sel.body))
      assert.equal(sel.body.complete, true)
      const plan = await agent('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action: { type: 'rename', params: { name: 'm' } } })
      return { selectionId: sel.body.selection_id as string, plan }
    }

    test('plan names over 30 rows: 409 naming the field, the members, the distinct versions and the fix; nothing stored', async () => {
      const { selectionId, plan } = await propose('business')
      assert.equal(plan.status, 409, JSON.stringify(plan.body))
      assert.equal(plan.body.error.code, 'conflict')
      assert.match(plan.body.error.message, /version field "rev" of resource "business" holds 3 distinct values over the 30 members of selection/)
      assert.match(plan.body.error.message, /fresh UUID/)
      assert.match(plan.body.error.message, /declare as version_field a column that means nothing else and changes on every write.*warrant check/)
      assert.deepEqual(plan.body.error.details, { reason: 'repeated_versions', resource: 'business', version_field: 'rev', members: ROWS, distinct_versions: 3, config_keys: ['version_field'] })
      assert.equal(await plansOn(selectionId), 0, 'no plan row is stored')
    })

    for (const table of ['etags', 'counters', 'times', 'few']) {
      test(`${table}: proposed as before`, async () => {
        const { plan } = await propose(table)
        assert.equal(plan.status, 201, JSON.stringify(plan.body))
      })
    }

    test('the demo resource proposes as before', async () => {
      const demo = fx.as('agent')
      const sel = await demo('POST', '/v1/resources/subscriptions/selections', { filter: {} })
      assert.equal(sel.status, 201, JSON.stringify(sel.body))
      const plan = await demo('POST', `/v1/selections/${sel.body.selection_id}/plans`, { action: { type: 'pause_collection', params: { reason: 'test' } } })
      assert.equal(plan.status, 201, JSON.stringify(plan.body))
    })
  })
}

describe('an HTTP resource whose version is read from a field holding a business value', () => {
  let things: Awaited<ReturnType<typeof startThingsGateway>>
  let agent: Actor
  before(async () => {
    // 20 things noted 'a' beside the upstream's own 7 noted 'n': 2 distinct values over 27 members
    const extra: Thing[] = Array.from({ length: 20 }, (_, i) => ({ id: `t${String(i).padStart(2, '0')}`, name: 'x', status: 'open', note: 'a' }))
    things = await startThingsGateway(extra, 'sqlite', (c) => {
      c.resources.things.connector.version = { from: 'field', field: 'note' }
    })
    agent = await things.fx.gateway.principals.authenticate(things.token, 'http')
  })
  after(async () => {
    await things?.close()
  })

  test('a PATCH with If-Match of a note is refused at proposal, nothing written', async () => {
    const selection = await things.fx.gateway.selections.create(agent, 'things', { filter: { status: 'open' } })
    await assert.rejects(things.fx.gateway.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } }), (e: any) => {
      assert.equal(e.code, 'conflict', e.message)
      assert.match(e.message, /version field "note" of resource "things" holds 2 distinct values over the 27 members/)
      assert.doesNotMatch(e.message, /UUID/)
      assert.deepEqual(e.details?.config_keys, ['connector.version.field'])
      return true
    })
    assert.equal(things.up.writes.size, 0)
  })
})
