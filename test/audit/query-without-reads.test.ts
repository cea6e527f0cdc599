import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { withFaultGateway } from '../operations/support/fault-gateway.js'
import { STORE_KINDS } from '../support/stores.js'

/**
 * `without_reads` leaves successful reads out in the query: each page is still `limit` rows where more exist, the pages
 * hold every other row once, and their `reads_left_out` counts add up to the reads. A refused read stays listed,
 * even one whose arguments spell an `"outcome":"ok"` member. Real SQLite and PostgreSQL.
 */
describe('an audit listing without its successful reads', () => {
  for (const kind of STORE_KINDS)
  test(`${kind}: full pages, every other row once, reads counted exactly, refused reads listed`, () =>
    withFaultGateway(kind, 2, { concurrency: 1, batch_size: 10 }, async (ctx) => {
      const id = await ctx.commit('query-without-reads')
      assert.equal((await ctx.fx.gateway.operations.waitFor(id, 30_000)).state, 'succeeded')
      const audit = ctx.fx.gateway.audit
      for (let i = 0; i < 7; i++) {
        for (let j = 0; j < 3; j++) await audit.record({ actor: null, surface: 'mcp', action: 'mcp:get_operation', summary: { arguments: { operation_id: id }, outcome: 'ok' }, operation_id: id })
        await audit.record({ actor: null, surface: 'mcp', action: 'mcp:get_operation', summary: { arguments: { operation_id: id, x: { outcome: 'ok' } }, outcome: 'refused', error: 'invalid_request' }, operation_id: id })
      }
      await audit.flush()
      const all = (await audit.query({ operation_id: id, limit: 1000 })).events
      const reads = all.filter((e) => e.action === 'mcp:get_operation' && !e.refused_claim).length
      assert.equal(reads, 21)
      const others = all.filter((e) => !(e.action === 'mcp:get_operation' && !e.refused_claim)).map((e) => e.seq)
      assert.ok(others.length > 10, String(others.length))
      const listed: number[] = []
      let counted = 0
      let before: number | undefined
      for (;;) {
        const page = await audit.query({ operation_id: id, newest_first: true, without_reads: true, limit: 4, ...(before === undefined ? {} : { before_seq: before }) })
        if (page.next_cursor !== null) assert.equal(page.events.length, 4, 'a full page while more exist')
        listed.push(...page.events.map((e) => e.seq))
        counted += page.reads_left_out!.count
        if (page.next_cursor === null) break
        before = page.next_cursor
      }
      assert.deepEqual(listed, [...others].sort((a, b) => b - a), 'every other row, once, newest first')
      assert.equal(counted, reads, 'the pages count every read left out, once')
      assert.equal(all.filter((e) => e.refused_claim && e.action === 'mcp:get_operation').length, 7)
      assert.equal((await audit.query({ operation_id: id, limit: 1000 })).reads_left_out, undefined, 'without the option, nothing is said left out')
    }))
})
