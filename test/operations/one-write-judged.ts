import assert from 'node:assert/strict'
import { resourceSchema } from '../../src/config/schema.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { judge, prepare, type TargetContext } from '../../src/operations/target-step.js'

/**
 * One target, record "a1" of the upstream at `origin` (`GET /items/{id}`, version from the `version` field),
 * read, written (`PATCH` setting `collection` to "paused", If-Match) and judged as an operation judges it.
 * `afterWrite` runs once the judge is done, before the connector closes.
 */
export async function judgeOnePause(origin: string, expectStatus: number[], afterWrite: () => void = () => {}) {
  const config = resourceSchema.parse({
    environment: { name: 'one-write' },
    connector: {
      kind: 'http',
      sources: [{ name: 'main', base_url: origin }],
      list: { path: '/items', pagination: { style: 'cursor' } },
      get: { path: '/items/{id}' },
      version: { from: 'field', field: 'version' },
    },
    fields: { id: 'string', status: 'string', collection: 'string', version: 'integer' },
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
        expect: { status: expectStatus, fields: { collection: 'paused' } },
        precondition: {},
        exempt: ['collection', 'version'],
      }),
    } as unknown as TargetContext
    const read = await connector.readByIds(['a1'])
    const prepared = await prepare(ctx, { ord: 0, record_id: 'a1', expected_version: '1' } as never, { kind: 'found', record: read.records.get('a1')! })
    assert.equal(prepared.kind, 'write')
    if (prepared.kind !== 'write') throw new Error('unreachable')
    const attempt = await judge(ctx, prepared, { outcome: await connector.write(prepared.request) })
    afterWrite()
    assert.ok(attempt.kind === 'done')
    return attempt
  } finally {
    await connector.close()
  }
}
