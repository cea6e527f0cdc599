import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { randomBytes } from 'node:crypto'
import { SYSTEM_ACTOR, WarrantError } from '../../src/contract/index.js'
import { createSqlConnector } from '../../src/connectors/sql/index.js'
import { createCursorCodec, searchAll } from '../../src/inventory/index.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

const isReserved = (path: string) => (error: unknown) => error instanceof WarrantError && error.code === 'invalid_request' && error.message.includes(path)

/**
 * Library callers, not the HTTP or MCP doors (which refuse the key before any schema sees it): a filter parsed
 * from JSON with a "__proto__" condition. The schema dropped that condition without a word, so the selection or
 * the search matched more than asked; now it is refused, naming the key, and nothing is frozen.
 */
describe('a "__proto__" condition given to the library', () => {
  let fx: GatewayFixture
  before(async () => {
    fx = await startDemoGateway({ store: 'sqlite', count: 50, serve: false })
  })
  after(async () => {
    await fx?.close()
  })

  test('selections.create refuses it and freezes nothing', async () => {
    const request = JSON.parse('{"filter": {"__proto__": {"eq": "nobody"}, "status": "past_due"}}')
    const before = await fx.gateway.store.db.selectFrom('selections').select('id').execute()
    await assert.rejects(() => fx.gateway.selections.create(SYSTEM_ACTOR, 'subscriptions', request), isReserved('filter.__proto__'))
    assert.equal((await fx.gateway.store.db.selectFrom('selections').select('id').execute()).length, before.length)
    // the same filter without it is a selection (the refusal is about the key, not the rest)
    const fine = await fx.gateway.selections.create(SYSTEM_ACTOR, 'subscriptions', { filter: { status: 'past_due' } })
    assert.ok(fine.count > 0)
  })

  test('searchAll refuses it before reading anything', async () => {
    const connector = createSqlConnector({ resource: fx.config.resources.subscriptions! })
    try {
      const filter = JSON.parse('{"__proto__": {"eq": "nobody"}, "status": "past_due"}')
      await assert.rejects(
        () =>
          searchAll(connector, { resource: 'subscriptions', filter, pageSize: 10 }, {}, {
            scope: { resource: 'subscriptions', environment: 'test', visibility: 'all', restricted: false },
            cursorCodec: createCursorCodec({ key: randomBytes(32) }),
          }),
        isReserved('filter.__proto__'),
      )
    } finally {
      await connector.close()
    }
  })
})
