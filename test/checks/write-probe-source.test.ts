import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { probeWrites } from '../../src/checks/write-probe.js'
import { writeProbeTargets } from '../../src/checks/write-probe-targets.js'
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

describe('which record each source is probed on (--write-probe values)', () => {
  test('SOURCE=ID per source, a plain ID for the one source probed (it may hold "="), on several the plain ID for each source not named', () => {
    const of = (t: ReturnType<typeof writeProbeTargets>) => [t.sources, [...t.ids]]
    assert.deepEqual(of(writeProbeTargets(['eu=sub_1', ''], ['eu', 'us'])), [['eu', 'us'], [['eu', 'sub_1']]])
    assert.deepEqual(of(writeProbeTargets(['a=b=='], ['main'])), [['main'], [['main', 'a=b==']]])
    assert.deepEqual(of(writeProbeTargets(['x=1'], ['eu', 'us'], 'us')), [['us'], [['us', 'x=1']]])
    assert.deepEqual(of(writeProbeTargets(['r1', 'us=u9'], ['eu', 'us'])), [['eu', 'us'], [['us', 'u9'], ['eu', 'r1']]])
  })

  test('refused: an undeclared source on several, a source --source leaves out, two ids for one source, a source with no id', () => {
    assert.throws(() => writeProbeTargets(['ap=1'], ['eu', 'us']), /declares no source "ap"; its sources: eu, us/)
    assert.throws(() => writeProbeTargets(['eu=1'], ['eu', 'us'], 'us'), /names source "eu", but --source probes "us" alone/)
    assert.throws(() => writeProbeTargets(['eu=1', 'eu=2'], ['eu', 'us']), /two ids/)
    assert.throws(() => writeProbeTargets(['r1', 'r2'], ['eu', 'us']), /two plain ids/)
    assert.throws(() => writeProbeTargets(['eu='], ['eu', 'us']), /names no id/)
  })
})
