import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, it } from 'node:test'
import type { Connector, ReadSession } from '../../src/connectors/connector.js'
import { walkInventory, type WalkedRecord } from '../../src/inventory/index.js'
import { createModelConnector, idOf, seedCollection, type ModelConnector, type ReadFault } from '../support/model-connector.js'
import { TEST_SCOPE, testCodec } from './helpers.js'

/**
 * The model connector, watched: how many reads are in flight in a session at once (never more than one), and
 * whether a session was closed with a read still in flight.
 */
function watched(model: ModelConnector) {
  const seen = { inFlight: 0, maxInFlight: 0, closedWithReadInFlight: false }
  const connector: Connector = {
    ...model,
    async openSession(): Promise<ReadSession> {
      const session = await model.openSession()
      return {
        ...session,
        consistentSnapshot: session.consistentSnapshot,
        snapshot: session.snapshot,
        async readPage(request) {
          seen.inFlight += 1
          seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight)
          try {
            return await session.readPage(request)
          } finally {
            seen.inFlight -= 1
          }
        },
        async close() {
          if (seen.inFlight > 0) seen.closedWithReadInFlight = true
          await session.close()
        },
      }
    },
  }
  return { connector, seen }
}

const options = (signal?: AbortSignal) => ({ scope: TEST_SCOPE, cursorCodec: testCodec(), ...(signal ? { signal } : {}) })
const slowUpstream = (ms: number) => (): ReadFault => ({ kind: 'delay', ms })

describe('walkInventory reads the next page while its caller handles the last one', () => {
  it('while the caller handles a page the next one is read; one read at a time in the session; every record once', async () => {
    const collection = seedCollection(['only'], 23)
    const model = createModelConnector({ collection, snapshots: true, onRead: slowUpstream(5) })
    const { connector, seen } = watched(model)
    const readsWhileHandled: number[] = []
    const got: WalkedRecord[] = []
    const summary = await walkInventory(connector, { resource: 'things', filter: {}, pageSize: 5 }, {}, options(), async (page) => {
      got.push(...page)
      await sleep(15)
      // reads sent by now; a walk that asked for the next page only after this returned would have sent one fewer
      readsWhileHandled.push(model.reads.length)
    })
    assert.equal(summary.status, 'complete')
    assert.deepEqual(got.map((r) => r.id), Array.from({ length: 23 }, (_, i) => idOf(i)))
    // while pages 1-4 are handled the next one is read; the fifth is the last: nothing after it
    assert.deepEqual(readsWhileHandled, [2, 3, 4, 5, 5])
    assert.equal(model.reads.length, 5)
    assert.equal(seen.maxInFlight, 1)
    assert.equal(seen.closedWithReadInFlight, false)
  })

  it('a budget that ends the walk reads no page past it', async () => {
    const collection = seedCollection(['only'], 40)
    const model = createModelConnector({ collection, snapshots: true })
    const items = await walkInventory(model, { resource: 'things', filter: {}, pageSize: 5 }, { maxItems: 10 }, options(), () => undefined)
    assert.equal(items.complete, false)
    assert.deepEqual(model.reads.map((r) => r.pageSize), [5, 5])

    const byPages = createModelConnector({ collection, snapshots: true })
    await walkInventory(byPages, { resource: 'things', filter: {}, pageSize: 5 }, { maxPages: 3 }, options(), () => undefined)
    assert.equal(byPages.reads.length, 3)

    const onePage = createModelConnector({ collection, snapshots: true })
    await walkInventory(onePage, { resource: 'things', filter: {}, pageSize: 5 }, {}, { ...options(), mode: 'page' }, () => undefined)
    assert.equal(onePage.reads.length, 1)
  })

  it('a caller that fails: its error, the page read ahead cancelled and settled before the session closes', async () => {
    const collection = seedCollection(['only'], 30)
    const model = createModelConnector({ collection, snapshots: true, onRead: (ctx) => (ctx.sessionReadIndex >= 2 ? { kind: 'delay', ms: 5_000 } : undefined) })
    const { connector, seen } = watched(model)
    let handed = 0
    const started = performance.now()
    await assert.rejects(
      walkInventory(connector, { resource: 'things', filter: {}, pageSize: 5 }, {}, options(), async () => {
        handed += 1
        // the third read (ahead of page 2) hangs in the upstream; the caller fails on page 2
        if (handed === 2) throw new Error('the store is full')
      }),
      /the store is full/,
    )
    assert.ok(performance.now() - started < 2_000, 'the hanging read ahead was cancelled, not waited for')
    assert.equal(model.reads.length, 3)
    assert.equal(model.reads[2]!.signal?.aborted, true)
    assert.equal(seen.closedWithReadInFlight, false)
    assert.notEqual(model.sessions[0]!.closedAt, null)
  })

  it("a caller's signal that aborts while it handles a page ends the walk with its reason, the read ahead cancelled", async () => {
    const collection = seedCollection(['only'], 30)
    const model = createModelConnector({ collection, snapshots: true, onRead: (ctx) => (ctx.sessionReadIndex >= 1 ? { kind: 'delay', ms: 5_000 } : undefined) })
    const { connector, seen } = watched(model)
    const caller = new AbortController()
    await assert.rejects(
      walkInventory(connector, { resource: 'things', filter: {}, pageSize: 5 }, {}, options(caller.signal), async () => {
        caller.abort(new Error('the client left'))
      }),
      /the client left/,
    )
    assert.equal(model.reads.length, 2)
    assert.equal(model.reads[1]!.signal?.aborted, true)
    assert.equal(seen.closedWithReadInFlight, false)
  })
})
