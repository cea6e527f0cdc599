import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import type { Connector } from '../../src/connectors/index.js'
import { createSqlConnector } from '../../src/connectors/sql/index.js'
import { createTelemetry, instrumentConnector } from '../../src/telemetry/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'

/**
 * The gateway wraps every connector for telemetry. A property the wrapper leaves out is a guarantee turned off
 * without a word: the sessions' `positions` once were, so no walk through the gateway could prove itself
 * (`stability: proven`), only the connector called directly.
 */

// (`snapshot` names each session apart, by the moment it opened: compared by kind only)
const SESSION_FACTS = ['consistentSnapshot', 'positions'] as const
const CONNECTOR_FACTS = ['kind', 'sources', 'ordering', 'writeEnforcesVersion'] as const
// what the catalogue says, which `warrant check` reports (it checks the wrapped connector)
const CATALOGUE_FACTS = ['refreshFacts', 'fieldTypeMisfits', 'stringColumns', 'versionColumnProblem', 'tableProblems'] as const

async function sameFacts(connector: Connector): Promise<void> {
  const wrapped = instrumentConnector(connector, 'r', createTelemetry({}))
  for (const fact of CONNECTOR_FACTS) assert.deepEqual(wrapped[fact], connector[fact], `connector ${fact}`)
  for (const fact of CATALOGUE_FACTS) {
    assert.equal(typeof wrapped[fact], typeof connector[fact], `connector ${fact}`)
    if (connector[fact]) assert.deepEqual(await wrapped[fact]!(), await connector[fact]!(), `connector ${fact}()`)
  }
  const session = await connector.openSession()
  const wrappedSession = await wrapped.openSession()
  for (const fact of SESSION_FACTS) assert.deepEqual(wrappedSession[fact], session[fact], `session ${fact}`)
  assert.equal(typeof wrappedSession.snapshot, typeof session.snapshot)
  await session.close()
  await wrappedSession.close()
}

describe('instrumentConnector keeps what the connector says of itself', () => {
  let upstream: TestUpstream
  let fx: GatewayFixture
  before(async () => {
    upstream = await startUpstream((_req, res) => sendJson(res, 200, { items: [] }))
    fx = await startDemoGateway({ store: 'sqlite', count: 300 })
  })
  after(async () => {
    await fx?.close()
    await upstream?.close()
  })

  test('http connectors of each position kind, and the sql connector', async () => {
    const base = [{ name: 'main', base_url: upstream.origin }]
    for (const pagination of [{ style: 'keyset', param: 'after' }, { style: 'offset' }, { style: 'cursor' }])
      await sameFacts(createHttpConnector({ resource: httpResource({ sources: base, list: { path: '/items', pagination } }) }))
    const sql = fx.gateway.catalogue.get('subscriptions').config
    const direct = createSqlConnector({ resource: sql })
    try {
      await sameFacts(direct)
      assert.equal((await direct.openSession().then(async (s) => (await s.close(), s))).positions, 'keyset')
    } finally {
      await direct.close()
    }
  })

  test('a search through the gateway continued over two calls proves itself by the keyset, as the connector alone does', async () => {
    const first = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: {}, page_size: 100, budget: { max_items: 150 } })
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.equal(first.body.complete, false)
    assert.equal(first.body.scope.stability, 'snapshot')
    const rest = await fx.as('agent')('POST', '/v1/resources/subscriptions/search', { filter: {}, page_size: 100, cursor: first.body.continuation.cursor })
    assert.equal(rest.status, 200, JSON.stringify(rest.body))
    assert.equal(rest.body.complete, true, JSON.stringify(rest.body.incomplete_reasons))
    assert.equal(rest.body.items.length + first.body.items.length, 300)
    assert.equal(rest.body.scope.consistent_snapshot, false, 'a second call opens a second read transaction')
    assert.equal(rest.body.scope.stability, 'proven')
  })
})
