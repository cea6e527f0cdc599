import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { probeWrites } from '../../src/checks/write-probe.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

/**
 * `warrant check --write-probe ID` on an http resource of two sources. "front" holds no r1 (a read of it is 404),
 * but its write endpoint answers every PATCH 412 whatever the id (it checks If-Match before it looks the record
 * up); "back" holds r1 and accepts any write. The probe read r1 on back, then sent its stale write by id alone:
 * the sources in order, so front's 412 was taken for the upstream refusing the stale version and the probe said
 * holds (vouching that operations may skip each target's second read), though back, where r1 lives, accepts it.
 * The write now goes to the source the probe read the record from.
 */
describe('the write probe on a resource of several sources', () => {
  const record = { id: 'r1', status: 'active', amount: 10, version: 3 }
  let front: TestUpstream
  let back: TestUpstream
  before(async () => {
    front = await startUpstream((req, res) => (req.method === 'PATCH' ? sendJson(res, 412, { error: 'version mismatch' }) : sendJson(res, 404, { error: 'not found' })))
    back = await startUpstream((req, res) => (req.url.pathname === '/items/r1' ? sendJson(res, 200, record) : sendJson(res, 404, { error: 'not found' })))
  })
  after(async () => {
    await front.close()
    await back.close()
  })

  test('the stale write goes to the source the record was read from; another source refusing it proves nothing', async () => {
    const config = httpResource(
      {
        sources: [
          { name: 'front', base_url: front.origin },
          { name: 'back', base_url: back.origin },
        ],
      },
      { actions: { pause: { set: { status: 'paused' }, write: { method: 'PATCH', path: '/items/{id}', body: { status: '{{set.status}}' } } } } },
    )
    const guarantees = await probeWrites({ config, connector: createHttpConnector({ resource: config }), id: 'r1' })
    // each source probed on its own: front holds no r1, so it is not probed; back, which holds it, accepts the stale write
    assert.deepEqual(guarantees.map((g) => [g.name, g.status]), [['write_probe@front', 'unknown'], ['write_probe.pause@back', 'unsafe']], JSON.stringify(guarantees))
    assert.equal(front.seen.filter((r) => r.method === 'PATCH').length, 0, 'the probe write went to a source that does not hold r1')
  })
})
