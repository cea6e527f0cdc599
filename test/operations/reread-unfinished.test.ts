import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { judgeOnePause } from './one-write-judged.js'

/**
 * The read after a write answered with what is not the record by its own word: 202 Accepted (the upstream took
 * the GET to answer it later) or 206 Partial Content for a byte range nobody asked for (a part of it). The record
 * in its body (here the approved values at a new version, what the write meant to do) is not what the upstream
 * holds. The write's effect is neither proven nor contradicted: `unknown` (effect_unverified), as any re-read
 * that failed, for a person to reconcile. Was: taken as the record read back, `succeeded`, for a write the
 * upstream never applied (and, refused as a record, it must not read as one the write left malformed: `failed`).
 */
const ANSWERS: readonly [string, number, Record<string, string>][] = [
  ['202 Accepted', 202, {}],
  ['206 Partial Content', 206, { 'content-range': 'bytes 0-70/900' }],
  // a transforming proxy's rewrite of the upstream's answer: not the upstream's word on the record
  ['203 Non-Authoritative Information', 203, {}],
]

for (const [name, status, headers] of ANSWERS)
  describe(`the read after a write answered ${name}`, () => {
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
        return written ? sendJson(res, status, { ...doc, collection: 'paused', version: 2 }, headers) : sendJson(res, 200, doc)
      })
    })
    after(() => upstream.close())

    test('unknown (effect_unverified), never succeeded nor failed', async () => {
      const attempt = await judgeOnePause(upstream.origin, [200, 204])
      assert.ok(attempt.kind === 'done')
      const { state, reason, message } = attempt.outcome
      assert.deepEqual([state, reason], ['unknown', 'effect_unverified'], `${state} (${reason}: ${message})`)
      assert.match(message ?? '', new RegExp(name))
    })
  })

/**
 * The write's own answer rewritten on the way (203 Non-Authoritative Information): its body is a proxy's word, not
 * the upstream's, so it proves nothing. Here it shows the approved values at a new version while the upstream never
 * applied the write: the record is re-read and judged on what the upstream holds. Was: `succeeded` on the body.
 */
describe('a write answered 203 Non-Authoritative Information with the approved record', () => {
  let upstream: TestUpstream
  const doc = { id: 'a1', status: 'active', collection: 'active', version: 1 }
  before(async () => {
    upstream = await startUpstream((req, res) =>
      req.method === 'GET' ? sendJson(res, 200, doc) : sendJson(res, 203, { ...doc, collection: 'paused', version: 2 }),
    )
  })
  after(() => upstream.close())

  test('judged on the record re-read, never succeeded on the rewritten body', async () => {
    const attempt = await judgeOnePause(upstream.origin, [200, 203, 204])
    assert.ok(attempt.kind === 'done')
    const { state, reason, message } = attempt.outcome
    assert.notEqual(state, 'succeeded', `${state} (${reason}: ${message})`)
  })
})
