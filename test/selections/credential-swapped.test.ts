import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { WarrantConfig } from '../../src/config/index.js'
import type { Actor } from '../../src/contract/index.js'
import { createLogger, openGateway } from '../../src/gateway/index.js'
import { startOddUpstream, thingsResourceConfig, type OddUpstream } from '../plans/support/odd-upstream.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'

/**
 * Many APIs answer staging and production (test mode and live mode, one tenant and another) on one host, the
 * credential deciding which. A resource switched from the staging key's variable to the production key's, base_url
 * and environment label as they were, left a selection frozen with the staging key usable: a plan on it would write,
 * with the production key, the records of the same ids there. The credential's reference (the variable or file it is
 * read from, never its value) is now part of where the connector reads, so the switch is `upstream_moved`; a key
 * rotated in the same variable is not.
 */
describe('a selection whose resource reads with another credential reference since it was frozen', () => {
  let up: OddUpstream
  let fx: GatewayFixture
  let agent: Actor
  before(async () => {
    process.env.WARRANT_TEST_THINGS_STAGING_KEY = 'staging-secret'
    process.env.WARRANT_TEST_THINGS_LIVE_KEY = 'live-secret'
    up = await startOddUpstream()
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 10,
      serve: false,
      edit: (c) => {
        c.resources.things = thingsResourceConfig(up.origin)
        c.resources.things.connector.credential = { scheme: 'Bearer', secret: { env: 'WARRANT_TEST_THINGS_STAGING_KEY' } }
      },
    })
    const issued = await fx.gateway.principals.issue({ name: 'things-agent', role: 'agent', scopes: { resources: ['things'], actions: '*' } })
    agent = await fx.gateway.principals.authenticate(issued.token, 'http')
  })
  after(async () => {
    await fx?.close()
    await up?.close()
  })

  test('switched to another variable: upstream_moved, refused for a proposal; the same variable (a rotated key): not moved', async () => {
    const selection = await fx.gateway.selections.create(agent, 'things', { filter: { status: 'open' } })
    assert.equal(selection.count, 7)
    for (const [variable, moved] of [['WARRANT_TEST_THINGS_LIVE_KEY', true], ['WARRANT_TEST_THINGS_STAGING_KEY', false]] as const) {
      await fx.gateway.audit.flush()
      const config = structuredClone(fx.config) as WarrantConfig & { resources: Record<string, any> }
      config.resources.things.connector.credential.secret = { env: variable }
      const other = await openGateway({ config, log: createLogger({ level: 'silent' }) })
      try {
        const view = await other.selections.view(agent, selection.selection_id)
        if (moved) {
          assert.match(view.upstream_moved ?? '', /points elsewhere/, variable)
          assert.match(view.upstream_moved ?? '', /credential/)
          await assert.rejects(other.plans.propose(agent, selection.selection_id, { action: { type: 'set_status', params: { status: 'closed' } } }), (e: any) => e.code === 'conflict' && e.details?.reason === 'upstream_moved')
        } else assert.equal(view.upstream_moved, null, variable)
        await other.audit.flush()
      } finally {
        await other.close()
      }
    }
    assert.equal(up.writes.size, 0)
  })
})
