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
  let answer: 'refuses' | 'routeless_json' | 'ok_false' | 'accepts' = 'refuses'
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.method === 'GET' && req.url.pathname === '/items/r1') return sendJson(res, 200, record)
      if (req.method === 'PATCH' && req.url.pathname === '/items/r1') {
        if (answer === 'routeless_json') return sendJson(res, 404, { error: 'not found' })
        if (answer === 'ok_false') return sendJson(res, 200, { ok: false, error: 'version_mismatch' })
        if (answer === 'accepts') return sendJson(res, 200, record)
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

  // A 2xx whose body says the request failed is no acceptance (error-body.ts): whether it refused the version or the
  // request is not known. `unsafe` said "ACCEPTED a write with a stale version", which nothing showed; `unknown`, like
  // `unsafe`, lets no operation skip a target's re-read (only `holds` does: version-proof.ts `vouches`).
  test('a 200 whose body says it failed ({"ok": false}) is not judged: unknown, naming what the body said', async () => {
    answer = 'ok_false'
    const guarantee = await probe()
    assert.equal(guarantee.status, 'unknown', guarantee.detail)
    assert.match(guarantee.detail, /"ok" is false/)
  })

  test('a 200 answering the record accepted the stale version: unsafe', async () => {
    answer = 'accepts'
    const guarantee = await probe()
    assert.equal(guarantee.status, 'unsafe', guarantee.detail)
  })
})
