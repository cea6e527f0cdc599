import assert from 'node:assert/strict'
import { after, before } from 'node:test'
import { parseConfig } from '../../src/config/index.js'
import { createCursorCodec } from '../../src/inventory/index.js'
import { createCatalogue, type Catalogue } from '../../src/resources/index.js'
import { createSelectionService, type SelectionService } from '../../src/selections/index.js'
import { startUpstream, type Handler, type TestUpstream } from '../connectors/http/upstream-server.js'
import { createTestStore, type StoreKind, type TestStore } from '../support/stores.js'

/**
 * A selection service over one http resource `items` (`/items`, cursor paging, `id`, `status`, `version`) served by
 * `handler` on a real loopback upstream, on a fresh store of `kind`: started before the tests of one describe block,
 * closed after them. Read its fields inside a test.
 */
export function itemsSelectionService(kind: StoreKind, handler: Handler): { readonly up: TestUpstream; readonly store: TestStore; readonly selections: SelectionService } {
  let up: TestUpstream | undefined
  let ts: TestStore | undefined
  let catalogue: Catalogue | undefined
  let selections: SelectionService | undefined
  before(async () => {
    up = await startUpstream(handler)
    ts = await createTestStore(kind)
    const config = parseConfig({
      store: ts.url,
      resources: {
        items: {
          environment: { name: 'items-test' },
          connector: { kind: 'http', sources: [{ name: 'main', base_url: up.origin }], timeout_ms: 2000, list: { path: '/items', pagination: { style: 'cursor' } }, get: { path: '/items/{id}' }, version: { from: 'field', field: 'version' } },
          fields: { id: 'string', status: 'string', version: 'integer' },
          review_fields: ['id', 'status'],
        },
      },
    })
    catalogue = createCatalogue({ config })
    selections = createSelectionService({ store: ts.store, catalogue, cursorCodec: createCursorCodec({ key: 'k'.repeat(32) }) })
  })
  after(async () => {
    await catalogue?.close()
    await ts?.drop()
    await up?.close()
  })
  return {
    get up() {
      return up ?? assert.fail('the upstream is started before the tests')
    },
    get store() {
      return ts ?? assert.fail('the store is created before the tests')
    },
    get selections() {
      return selections ?? assert.fail('the service is created before the tests')
    },
  }
}
