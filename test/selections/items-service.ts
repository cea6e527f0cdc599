import assert from 'node:assert/strict'
import { after, before } from 'node:test'
import type { Catalogue } from '../../src/resources/index.js'
import type { SelectionService } from '../../src/selections/index.js'
import { startUpstream, type Handler, type TestUpstream } from '../connectors/http/upstream-server.js'
import { createTestStore, type StoreKind, type TestStore } from '../support/stores.js'
import { httpItemsResource, selectionServiceOn } from './fixtures/selection-config.js'

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
    ;({ catalogue, selections } = selectionServiceOn(ts, { items: httpItemsResource(up.origin) }))
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
