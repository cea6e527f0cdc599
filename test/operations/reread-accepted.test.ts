import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { judgeOnePause } from './one-write-judged.js'

/**
 * The read after a write answered 202 Accepted: the upstream took the GET to answer it later, so the record in
 * its body (here the approved values at a new version, what the write meant to do) is not what it holds. The
 * write's effect is neither proven nor contradicted: `unknown` (effect_unverified), as any re-read that failed,
 * for a person to reconcile. Was: taken as the record read back, `succeeded`, for a write the upstream never
 * applied (and, the 202 refused as a record, it must not read as one the write left malformed: `failed`).
 */
describe('the read after a write answered 202 Accepted', () => {
  let upstream: TestUpstream
  const doc = { id: 'a1', status: 'active', collection: 'active', version: 1 }
  let written = false
  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.method !== 'GET') {
        // answered, never applied
        written = true
        res.writeHead(200)
        return res.end()
      }
      return written ? sendJson(res, 202, { ...doc, collection: 'paused', version: 2 }) : sendJson(res, 200, doc)
    })
  })
  after(() => upstream.close())

  test('unknown (effect_unverified), never succeeded nor failed', async () => {
    const attempt = await judgeOnePause(upstream.origin, [200, 204])
    assert.ok(attempt.kind === 'done')
    const { state, reason, message } = attempt.outcome
    assert.deepEqual([state, reason], ['unknown', 'effect_unverified'], `${state} (${reason}: ${message})`)
    assert.match(message ?? '', /202 Accepted/)
  })
})
