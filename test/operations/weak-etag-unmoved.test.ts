import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { resourceSchema } from '../../src/config/schema.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { sameVersion } from '../../src/operations/effect.js'
import { judge, prepare, type TargetContext } from '../../src/operations/target-step.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

/**
 * An ETag-versioned upstream whose tag does not move on writes (a tag of the record's revision that the write
 * path does not bump), behind a proxy that weakens the tag of some answers (nginx weakens the ETag of every answer
 * it compresses, and compresses by Content-Type and size): the read before the write shows `"v1"`, the PATCH's
 * answer `W/"v1"`. Both name the opaque tag v1 (RFC 9110 §8.8.3.2, weak comparison): the version did not move, so
 * the write proves nothing (`effect_unverified`), as with `"v1"` twice; it was judged on its answer, `succeeded`.
 */
describe('a version seen after the write only weakened (W/"v1" after "v1")', () => {
  const record = { id: 'a1', status: 'active', collection: 'active' }
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream(async (req, res) => {
      if (req.url.pathname !== '/items/a1') return sendJson(res, 404, { error: 'not found' })
      if (req.method === 'GET') return sendJson(res, 200, record, { etag: '"v1"' })
      if (req.method === 'PATCH') {
        record.collection = 'paused'
        return sendJson(res, 200, record, { etag: 'W/"v1"' })
      }
      return sendJson(res, 405, {})
    })
  })
  after(() => upstream.close())

  test('is unknown (effect_unverified) and halts, never succeeded', async () => {
    const config = resourceSchema.parse({
      environment: { name: 'weak-etag' },
      connector: {
        kind: 'http',
        sources: [{ name: 'main', base_url: upstream.origin }],
        list: { path: '/items', pagination: { style: 'cursor' } },
        get: { path: '/items/{id}' },
        version: { from: 'etag' },
      },
      fields: { id: 'string', status: 'string', collection: 'string' },
      review_fields: ['id'],
      actions: { pause: { set: { collection: 'paused' }, write: { path: '/items/{id}', body: { collection: '{{set.collection}}' } } } },
    })
    const connector = createHttpConnector({ resource: config })
    try {
      const ctx = {
        connector,
        hidden: new Set<string>(),
        fieldTypes: config.fields,
        execution: { action_config: config.actions.pause },
        render: ({ id }: { id: string }) => ({
          set: { collection: 'paused' },
          http: { method: 'PATCH', path: `/items/${id}`, body: { collection: 'paused' }, ifMatch: true, style: 'patch', version: { in: 'header', name: 'If-Match' } },
          expect: { status: [200], fields: { collection: 'paused' } },
          precondition: {},
          exempt: ['collection'],
        }),
      } as unknown as TargetContext
      const read = await connector.readByIds(['a1'])
      assert.equal(read.records.get('a1')?.version, '"v1"')
      const prepared = await prepare(ctx, { ord: 0, record_id: 'a1', expected_version: '"v1"' } as never, { kind: 'found', record: read.records.get('a1')! })
      assert.equal(prepared.kind, 'write')
      if (prepared.kind !== 'write') throw new Error('unreachable')
      const attempt = await judge(ctx, prepared, { outcome: await connector.write(prepared.request) })
      assert.ok(attempt.kind === 'done')
      assert.deepEqual([attempt.outcome.state, attempt.outcome.reason], ['unknown', 'effect_unverified'], attempt.outcome.message ?? '')
      assert.equal(attempt.observed.halt?.rule, 'effect_unverified')
    } finally {
      await connector.close()
    }
  })

  test('every version comparison of an operation (its re-read, a conflict, reconcile) takes the two as one tag', () => {
    assert.equal(sameVersion('W/"v1"', '"v1"'), true)
    assert.equal(sameVersion('"v1"', 'W/"v1"'), true)
    assert.equal(sameVersion('W/"v1"', 'W/"v2"'), false)
    // only entity tags: an unquoted version is text
    assert.equal(sameVersion('W/v1', 'v1'), false)
  })
})
