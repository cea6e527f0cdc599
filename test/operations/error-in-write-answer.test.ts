import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'
import { judgeOnePause } from './one-write-judged.js'

/**
 * A write answered 200 whose body says at its top level that the request failed (GraphQL-style `errors` beside the
 * record, `ok: false`, `status: "error"`), carrying the record as the write would have left it: the record beside
 * such a member is what the upstream meant to do, not what it holds. Here it kept `collection: "active"` (another
 * change moved the version), yet the answer showed "paused" at version 2 and the target was `succeeded` on it. The
 * answer is not taken as the record: the record is re-read and judged.
 */
describe('a write answer whose body says the request failed', () => {
  let stored = { id: 'a1', status: 'active', collection: 'active', version: 1 }
  let answer: (record: typeof stored) => unknown = () => null
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url.pathname !== '/items/a1') return sendJson(res, 404, { error: 'not found' })
      if (req.method === 'GET') return sendJson(res, 200, stored)
      // not saved; a hook of the upstream's own moved the version all the same
      stored = { ...stored, version: 2 }
      return sendJson(res, 200, answer(stored))
    })
  })
  after(() => upstream.close())

  const cases: [string, (record: typeof stored) => unknown][] = [
    ['"errors" beside the record', (record) => ({ ...record, collection: 'paused', errors: [{ message: 'collection is locked' }] })],
    ['"ok": false beside the record', (record) => ({ ...record, collection: 'paused', ok: false })],
  ]
  for (const [what, shape] of cases)
    test(`${what}: re-read and judged, failed (effect_contradicted), never succeeded`, async () => {
      stored = { id: 'a1', status: 'active', collection: 'active', version: 1 }
      answer = shape
      const attempt = await judgeOnePause(upstream.origin, [200])
      assert.ok(attempt.kind === 'done')
      assert.deepEqual([attempt.outcome.state, attempt.outcome.reason], ['failed', 'effect_contradicted'], attempt.outcome.message ?? '')
      assert.match(attempt.outcome.message ?? '', /re-read/)
      assert.equal(attempt.observed.halt?.rule, 'effect_contradicted')
    })

  test('a record holding a declared field named like such a member is still taken as the record', async () => {
    // the record's own "status" is a declared field: "failed" there is a value, not the answer's verdict
    stored = { id: 'a1', status: 'failed', collection: 'active', version: 1 }
    answer = (record) => (stored = { ...record, collection: 'paused' })
    const attempt = await judgeOnePause(upstream.origin, [200])
    assert.ok(attempt.kind === 'done')
    assert.equal(attempt.outcome.state, 'succeeded', attempt.outcome.message ?? '')
  })
})
