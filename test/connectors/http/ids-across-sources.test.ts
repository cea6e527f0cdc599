import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { callLog, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * Two sources (regions, tenants) whose ids are not unique across them: "7" is one record on "eu" and another on
 * "us", both at version 1 (counters start there). A selection over `status: past_due` freezes us/7 alone (eu/7 is
 * active, so the freeze's check for one id from two sources never sees it), and a read or a write by id goes to
 * the first source that has the id: the executor's re-read found eu/7 at the frozen version 1 and the PATCH with
 * If-Match 1 went to eu/7, the wrong record, verified `succeeded` on it. A read by id must say the id names two.
 */
describe('an id held by two sources of one http resource', () => {
  let upstream: TestUpstream
  const held: Record<string, Record<string, { id: string; status: string; amount: number; version: number }>> = {
    eu: { '7': { id: '7', status: 'active', amount: 10, version: 1 }, '8': { id: '8', status: 'active', amount: 5, version: 1 } },
    us: { '7': { id: '7', status: 'past_due', amount: 99, version: 1 }, '9': { id: '9', status: 'past_due', amount: 1, version: 2 } },
  }
  before(async () => {
    upstream = await startUpstream((req, res) => {
      const one = /^\/(eu|us)\/items\/([^/]+)$/.exec(req.url.pathname)
      if (one) {
        const record = held[one[1]!]![decodeURIComponent(one[2]!)]
        return record ? sendJson(res, 200, record) : sendJson(res, 404, { error: 'not found' })
      }
      const batch = /^\/(eu|us)\/items$/.exec(req.url.pathname)
      const asked = req.url.searchParams.get('ids')
      if (batch && asked !== null) return sendJson(res, 200, { items: asked.split(',').flatMap((id) => held[batch[1]!]![id] ?? []) })
      return sendJson(res, 404, { error: 'no route' })
    })
  })
  after(() => upstream.close())

  function connector(get: Record<string, unknown> = { path: '/items/{id}' }) {
    const log = callLog()
    const conn = createHttpConnector({
      resource: httpResource({
        sources: [
          { name: 'eu', base_url: `${upstream.origin}/eu` },
          { name: 'us', base_url: `${upstream.origin}/us` },
        ],
        get,
      }),
      onCall: log.onCall,
    })
    return { conn, calls: log.calls }
  }

  it('a read by id of an id two sources hold fails naming both, never the first source\'s record', async () => {
    const { conn } = connector()
    const result = await conn.readByIds(['7'])
    assert.equal(result.records.has('7'), false, 'eu/7 was handed over for an id that also names us/7')
    assert.deepEqual(result.missing, [])
    assert.equal(result.failed.length, 1)
    assert.equal(result.failed[0]!.id, '7')
    assert.match(result.failed[0]!.message, /sources "eu" and "us"/)
  })

  it('an id one source holds is read as before; the others are asked too', async () => {
    const { conn, calls } = connector()
    const result = await conn.readByIds(['8', '9'])
    assert.deepEqual([result.records.get('8')?.version, result.records.get('9')?.version], ['1', '2'])
    assert.deepEqual(result.failed, [])
    assert.deepEqual(
      calls.filter((c) => c.targetId === '8').map((c) => [c.source, c.status]),
      [['eu', 200], ['us', 404]],
    )
  })

  it('through get.batch too: an id found in one source\'s batch answer is asked of the others, and fails where another holds it', async () => {
    const { conn } = connector({ path: '/items/{id}', batch: { path: '/items', ids_param: 'ids', items_path: 'items' } })
    const result = await conn.readByIds(['7', '8', '9'])
    assert.equal(result.records.has('7'), false, 'eu/7 was handed over for an id that also names us/7')
    assert.deepEqual([result.records.get('8')?.fields.amount, result.records.get('9')?.fields.amount], [5, 1])
    assert.deepEqual(result.failed.map((f) => f.id), ['7'])
    assert.match(result.failed[0]!.message, /sources "eu" and "us"/)
  })
})
