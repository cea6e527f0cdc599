import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createAuditLog } from '../../src/audit/index.js'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { collection, httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream } from '../connectors/http/upstream-server.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

const KEY = 'SECRETKEY-9c1e'

/**
 * An API that takes its key in the query string (`?api_key=`, `?key=`) is configured with the key in the path
 * (`get.path: /items/{id}?api_key=…`): the connector's credential goes in a header only. Every call row's endpoint
 * (its action and summary) held the path as configured, key included, though a call row is documented to carry the
 * endpoint template and never a secret. Query values are recorded as `[redacted]`, names and placeholders kept.
 */
for (const kind of STORE_KINDS) {
  describe(`a query value in a configured path (${kind})`, () => {
    test('never enters a call row; the parameter name and placeholders stay', async () => {
      const items = collection(2)
      const upstream = await startUpstream((req, res) => {
        if (req.url.searchParams.get('api_key') !== KEY) return sendJson(res, 401, { error: 'no key' })
        return sendJson(res, 200, items[0])
      })
      const ts = await createTestStore(kind)
      try {
        const audit = createAuditLog({ store: ts.store, log: { error: () => undefined } })
        const resource = httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], get: { path: `/items/{id}?api_key=${KEY}&expand={id}` } })
        const connector = createHttpConnector({ resource, onCall: audit.callRecorder({ operation_id: 'op_1' }) })
        await connector.readByIds(['r001'])
        await audit.flush()
        const rows = await ts.store.db.selectFrom('audit_events').selectAll().execute()
        assert.equal(rows.length, 1)
        assert.doesNotMatch(JSON.stringify(rows), /SECRETKEY/)
        assert.equal(rows[0]!.action, 'GET /items/{id}?api_key=[redacted]&expand={id}')
        assert.equal((JSON.parse(rows[0]!.summary) as { endpoint: string }).endpoint, '/items/{id}?api_key=[redacted]&expand={id}')
        assert.ok((await audit.verify()).ok)
      } finally {
        await ts.drop()
        await upstream.close()
      }
    })
  })
}
