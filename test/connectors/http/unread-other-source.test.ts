import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { httpResource } from './fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from './upstream-server.js'

/**
 * Two sources on two servers, under unlike base paths ("ledger" at /ledger/v3, "archive" at /old/api), ids unique
 * only by convention. An id the ledger holds while the archive's read of it fails (a 5xx, a timeout, an answer
 * that is not JSON) may be held by the archive too: a read or a write by id could then reach the other record, so
 * Warrant cannot say the ledger's is the one. It must come back failed with the reason, never found.
 */
describe('an id found on one source while another source\'s read of it failed', () => {
  let ledger: TestUpstream
  let archive: TestUpstream
  const held = (id: string) => ({ id, status: 'past_due', amount: 40, version: 3 })
  before(async () => {
    ledger = await startUpstream((req, res) => {
      const one = /^\/ledger\/v3\/items\/([^/]+)$/.exec(req.url.pathname)
      if (one) return sendJson(res, 200, held(decodeURIComponent(one[1]!)))
      const asked = req.url.searchParams.get('ids')
      if (req.url.pathname === '/ledger/v3/items' && asked !== null) return sendJson(res, 200, { items: asked.split(',').map(held) })
      return sendJson(res, 404, { error: 'no route' })
    })
    archive = await startUpstream((req, res) => {
      const one = /^\/old\/api\/items\/([^/]+)$/.exec(req.url.pathname)
      const id = one ? decodeURIComponent(one[1]!) : ''
      if (id === 'acct-500') return sendJson(res, 500, { error: 'shard down' })
      if (id === 'acct-slow') return new Promise<void>((resolve) => setTimeout(resolve, 2000)).then(() => sendJson(res, 404, { error: 'late' }))
      if (id === 'acct-garbled') {
        res.writeHead(200, { 'content-type': 'application/json' })
        return res.end('{"id": "acct-garbled", "status": ')
      }
      if (id === 'acct-busy') return sendJson(res, 429, { error: 'slow down' }, { 'retry-after': '7' })
      if (one) return sendJson(res, 404, { error: 'not found' })
      // the batch endpoint answers nothing useful: every id is then asked alone
      return sendJson(res, 503, { error: 'batch unavailable' })
    })
  })
  after(async () => {
    await ledger.close()
    await archive.close()
  })

  function connector(order: 'ledger-first' | 'archive-first', get: Record<string, unknown> = { path: '/items/{id}' }) {
    const sources = [
      { name: 'ledger', base_url: `${ledger.origin}/ledger/v3` },
      { name: 'archive', base_url: `${archive.origin}/old/api` },
    ]
    return createHttpConnector({ resource: httpResource({ timeout_ms: 300, sources: order === 'ledger-first' ? sources : sources.reverse(), get }) })
  }

  for (const order of ['ledger-first', 'archive-first'] as const)
    it(`a 5xx, a timeout or an unreadable answer on the other source leaves the id failed with the reason, not found (${order})`, async () => {
      const conn = connector(order)
      try {
        const result = await conn.readByIds(['acct-500', 'acct-slow', 'acct-garbled', 'acct-ok'])
        assert.deepEqual([...result.records.keys()], ['acct-ok'], 'an id the archive could not be asked about was handed over as the ledger\'s record')
        assert.deepEqual(result.missing, [])
        const failed = new Map(result.failed.map((f) => [f.id, f]))
        assert.deepEqual([...failed.keys()].sort(), ['acct-500', 'acct-garbled', 'acct-slow'])
        for (const f of failed.values()) assert.match(f.message, /found on source "ledger".*source "archive" could not be read/)
        assert.match(failed.get('acct-500')!.message, /500/)
        assert.equal(failed.get('acct-500')!.status, 500)
        assert.match(failed.get('acct-slow')!.message, /time|answer/i)
        assert.match(failed.get('acct-garbled')!.message, /JSON|json|read/)
      } finally {
        await conn.close()
      }
    })

  it('a 429 on the other source passes its wait on, so a caller reads again later', async () => {
    const conn = connector('ledger-first')
    try {
      const result = await conn.readByIds(['acct-busy'])
      assert.equal(result.records.has('acct-busy'), false)
      assert.equal(result.failed[0]?.status, 429)
      assert.equal(result.failed[0]?.retryAfterSeconds, 7)
    } finally {
      await conn.close()
    }
  })

  it('through get.batch too: an id in the ledger\'s batch answer whose archive read fails is failed, not found', async () => {
    const conn = connector('ledger-first', { path: '/items/{id}', batch: { path: '/items', ids_param: 'ids', items_path: 'items' } })
    try {
      const result = await conn.readByIds(['acct-500', 'acct-garbled', 'acct-ok'])
      assert.deepEqual([...result.records.keys()], ['acct-ok'])
      assert.deepEqual(result.failed.map((f) => f.id).sort(), ['acct-500', 'acct-garbled'])
      for (const f of result.failed) assert.match(f.message, /found on source "ledger".*source "archive" could not be read/)
    } finally {
      await conn.close()
    }
  })
})
