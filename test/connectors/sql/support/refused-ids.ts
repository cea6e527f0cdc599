import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { SqlConnector } from '../../../../src/connectors/sql/index.js'
import { search } from './engine.js'

/**
 * The three answers of a connector whose id column is refused as an id (`TableFacts.idRefusal`): a walk refused in
 * pages of any size, saying `refusal`; a read by any id failed, none missing; a write refused before anything is
 * sent (`unchanged` checks the table). `connector` is read when each test runs (set in a `before`).
 */
export function idRefusedTests(connector: () => SqlConnector, refusal: RegExp, ids: { readonly read: readonly string[]; readonly write: string }, unchanged: () => Promise<void>): void {
  it('a walk is refused, naming the column and the fix, whatever its page size', async () => {
    for (const pageSize of [1, 10]) {
      const envelope = await search(connector(), {}, pageSize)
      assert.deepEqual(envelope.items, [])
      assert.equal(envelope.complete, false)
      assert.match(envelope.incomplete_reasons.map((r) => r.message).join(' | '), refusal)
    }
  })

  it('a read by id fails every id, none called missing', async () => {
    const read = await connector().readByIds(ids.read)
    assert.deepEqual([read.records.size, read.missing], [0, []])
    assert.equal(read.failed.length, ids.read.length)
    for (const f of read.failed) assert.match(f.message, refusal)
  })

  it('a write is refused before anything is sent', async () => {
    await assert.rejects(connector().write({ id: ids.write, expectedVersion: '1', set: { name: 'x' }, precondition: {} }), refusal)
    await unchanged()
  })
}
