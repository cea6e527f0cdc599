import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

/**
 * A fields list naming a field twice (`["id","id"]`, `?fields=status,status`) was taken: a search answered it, and a
 * selection froze it with the name twice in its `fields`. An empty name (`[""]`, `?fields=`) was taken too: `?fields=`
 * answered a record with no review field at all. Each is a 400 naming the list and the field, by the one schema per
 * boundary (HTTP and MCP alike), and nothing is made.
 */
describe('fields lists over HTTP: a name twice or an empty name is 400 naming it, nothing made', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 50 })
  })
  after(async () => {
    await fx?.close()
  })

  const selections = async () => Number((await fx.gateway.store.db.selectFrom('selections').select(fx.gateway.store.db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

  const cases: [string, string, string, unknown, RegExp][] = [
    ['search, a name twice', 'POST', '/v1/resources/subscriptions/search', { fields: ['id', 'status', 'id'] }, /fields: field "id" is named twice/],
    ['search, an empty name', 'POST', '/v1/resources/subscriptions/search', { fields: [''] }, /fields\.0: .*empty/],
    ['selection, a name twice', 'POST', '/v1/resources/subscriptions/selections', { filter: {}, fields: ['status', 'status'] }, /fields: field "status" is named twice/],
    ['selection, an empty name', 'POST', '/v1/resources/subscriptions/selections', { filter: {}, fields: ['status', ''] }, /fields\.1: .*empty/],
    ['a record, a name twice', 'GET', '/v1/resources/subscriptions/records/sub_00001?fields=status,region,status', undefined, /fields: field "status" is named twice/],
    ['a record, an empty list', 'GET', '/v1/resources/subscriptions/records/sub_00001?fields=', undefined, /fields: .*empty/],
    ['a record, an empty name', 'GET', '/v1/resources/subscriptions/records/sub_00001?fields=status,,region', undefined, /fields: .*empty/],
    ['a record by query, a name twice', 'GET', '/v1/resources/subscriptions/records?id=sub_00001&fields=id,id', undefined, /fields: field "id" is named twice/],
    ['a record by query, an empty id', 'GET', '/v1/resources/subscriptions/records?id=', undefined, /id: /],
  ]
  for (const [name, method, path, body, names] of cases)
    test(name, async () => {
      const before = await selections()
      const res = await fx.as('agent')(method, path, body)
      assert.equal(res.status, 400, JSON.stringify(res.body))
      assert.equal(res.body.error.code, 'invalid_request')
      assert.match(res.body.error.message, names)
      assert.equal(await selections(), before, 'no selection was made')
    })

  test('a list naming each field once is answered, in the order asked', async () => {
    const res = await fx.as('agent')('GET', '/v1/resources/subscriptions/records/sub_00001?fields=status,region')
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const search = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { fields: ['status', 'id'], budget: { max_items: 1 } })
    assert.equal(search.status, 200, JSON.stringify(search.body))
  })
})
