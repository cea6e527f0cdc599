import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { filterSchema } from '../../src/contract/index.js'
import { fromZodError } from '../../src/api/index.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'

// A filter condition is a value or an object of operators (a zod union): a condition wrong inside its operators
// object was answered "filter.id: Invalid input", naming neither the operator nor what is wrong with it.
const big = Array.from({ length: 10_001 }, (_, i) => `sub_${i}`)

describe('a refused union names the member that is wrong and why', () => {
  const messageOf = (filter: unknown) => fromZodError(filterSchema.safeParse(filter).error!, 'request body').message

  test('the operator and its problem, at its path', () => {
    assert.match(messageOf({ id: { in: big } }), /id\.in: .*10000/)
    assert.match(messageOf({ id: { not_in: big } }), /id\.not_in: .*10000/)
    assert.match(messageOf({ amount_due: { lt: [1] } }), /amount_due\.lt: .*string, number or boolean.*received array/)
    assert.match(messageOf({ id: { in: ['a', {}] } }), /id\.in\.1: .*string, number or boolean.*received object/)
  })

  test('a value of no accepted shape lists the shapes accepted', () => {
    assert.match(messageOf({ id: null }), /id: .*string, number, boolean or object.*received null/)
  })
})

describe('over HTTP: a search or a selection with an oversized `in` is 400 naming filter.<field>.in', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 50 })
  })
  after(() => fx?.close())

  test('search and selection', async () => {
    for (const path of ['/v1/resources/subscriptions/search', '/v1/resources/subscriptions/selections']) {
      const answer = await fx.as('agent')('POST', path, { filter: { id: { in: big } } })
      assert.equal(answer.status, 400)
      assert.equal(answer.body.error.code, 'invalid_request')
      assert.match(answer.body.error.message, /filter\.id\.in: .*10000/, path)
    }
    const selections = await fx.gateway.store.db.selectFrom('selections').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()
    assert.equal(Number(selections.n), 0, 'nothing frozen')
  })
})
