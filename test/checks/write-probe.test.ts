import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { probeWrites } from '../../src/checks/write-probe.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

/**
 * `warrant check --write-probe` over http: a probe that held vouches for the action (operations then write on a
 * batch's read), so it holds only where the upstream refused the stale version. A JSON 404 to the write of a
 * record the upstream reads fine is the write path not knowing the record, which says nothing of the version.
 */
describe('the write probe of an http action', () => {
  const record = { id: 'r1', status: 'active', amount: 10, version: 3 }
  // how the write endpoint answers a PATCH with a stale If-Match
  let answer: 'refuses' | 'routeless_json' = 'refuses'
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.method === 'GET' && req.url.pathname === '/items/r1') return sendJson(res, 200, record)
      if (req.method === 'PATCH' && req.url.pathname === '/items/r1') {
        if (answer === 'routeless_json') return sendJson(res, 404, { error: 'not found' })
        return sendJson(res, 412, { error: 'version mismatch' })
      }
      return sendJson(res, 404, { error: 'not found' })
    })
  })
  after(() => upstream?.close())

  const probe = async () => {
    const config = httpResource(
      { sources: [{ name: 'main', base_url: upstream.origin }] },
      { actions: { pause: { set: { status: 'paused' }, write: { method: 'PATCH', path: '/items/{id}', body: { status: '{{set.status}}' } } } } },
    )
    const [guarantee] = await probeWrites({ config, connector: createHttpConnector({ resource: config }), id: 'r1' })
    return guarantee!
  }

  test('a 412 to the stale version holds', async () => {
    answer = 'refuses'
    const guarantee = await probe()
    assert.equal(guarantee.status, 'holds', guarantee.detail)
  })

  test('a JSON 404 to the write of a record read by id is no refusal of the version: unknown, naming the write path', async () => {
    answer = 'routeless_json'
    const guarantee = await probe()
    assert.equal(guarantee.status, 'unknown', guarantee.detail)
    assert.match(guarantee.detail, /404/)
    assert.match(guarantee.detail, /reads it/)
    assert.deepEqual(guarantee.config_keys, ['actions.pause.write.path'])
  })
})
