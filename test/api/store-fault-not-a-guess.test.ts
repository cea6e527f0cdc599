import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { demoGatewayFor } from '../support/gateway-fixture.js'
import { TEST_POSTGRES_ADMIN_URL } from '../support/stores.js'

// The failure limit (20 failed authentications a minute per address, then 429) counted every error authentication
// threw, the store's own included: an agent that retried through a short PostgreSQL outage (each request 503
// store_unavailable) was, once the store was back, refused 429 "too many failed authentications from this address"
// with a valid token for up to a minute, its operator told the agent had been guessing tokens. Only a token
// refused counts now.
describe('a store that cannot answer authentication is no failed guess', () => {
  const env = demoGatewayFor({ store: 'postgres', count: 50 })
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_ADMIN_URL })
  before(() => admin.connect())
  after(() => admin.end())

  test('25 requests refused 503 while the store refuses connections; once it is back, the valid token gets in', { timeout: 120_000 }, async () => {
    const { fx } = env
    const name = new URL(fx.storeUrl).pathname.slice(1)
    const agent = fx.as('agent')
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
    try {
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name])
      for (let i = 0; i < 25; i++) {
        const answer = await agent('GET', '/v1/resources')
        assert.equal(answer.status, 503, `request ${i}: ${JSON.stringify(answer.body)}`)
        assert.equal(answer.body.error.code, 'store_unavailable')
      }
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
    }
    const back = await agent('GET', '/v1/resources')
    assert.equal(back.status, 200, JSON.stringify(back.body))
    // a refused token still counts
    for (let i = 0; i < 20; i++) assert.equal((await fx.as('agent')('GET', '/v1/resources', undefined, { authorization: `Bearer wrt_agent_guess_${i}` })).status, 401)
    assert.equal((await agent('GET', '/v1/resources')).status, 429)
  })
})
