import assert from 'node:assert/strict'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { describe, test } from 'node:test'
import BetterSqlite3 from 'better-sqlite3'
import fc from 'fast-check'
import { sql } from 'kysely'
import { createAuditLog, type AuditLogLogger } from '../../src/audit/index.js'
import { markInFlight } from '../../src/operations/ledger.js'
import { commitJoinerOf, type JoinedWrites } from '../../src/store/index.js'
import { createHarness, type Harness } from './support/harness.js'
import { NOW, OWNER, seedOperation } from './support/seed-operation.js'

/**
 * On a SQLite store the audit log's queued rows join the operations ledger's transactions (joinCommits): a
 * window's in-flight marks or outcomes and the audit rows of the upstream calls before them are one sync, not
 * two or three. What must hold: the rows are committed when the ledger's commit returns, in the order they were
 * queued; a ledger transaction that rolls back loses none of them and writes none twice; a row the chain refuses
 * never undoes the ledger's writes.
 */

const call = (label: string) => ({ source: 'db', method: 'UPDATE', endpoint: label, status: null, outcome: 'written' as const, durationMs: 1 })

/** What another connection sees committed: the endpoints of the call rows and the actions of run rows, by seq. */
function committedRows(h: Harness): string[] {
  const file = h.storeUrl.replace(/^sqlite:/, '')
  const db = new BetterSqlite3(file, { readonly: true })
  try {
    return (db.prepare(`select level, action, summary from audit_events order by seq`).all() as { level: string; action: string; summary: string }[]).map((r) =>
      r.level === 'call' ? String(JSON.parse(r.summary).endpoint) : r.action,
    )
  } finally {
    db.close()
  }
}

function collectingLog(): AuditLogLogger & { readonly errors: string[] } {
  const errors: string[] = []
  return { errors, error: (_fields, message) => void errors.push(message) }
}

describe('audit rows join the ledger commit (sqlite store)', () => {
  test('call rows queued before an in-flight mark are committed when the mark returns, before their own linger ends', async () => {
    const h = await createHarness('sqlite', { count: 1 })
    try {
      await seedOperation(h, 'op_joined', 2)
      const audit = createAuditLog({ store: h.store, log: collectingLog() })
      audit.recordCall(call('read window 1'))
      audit.recordCall(call('write target 1'))
      assert.equal(await markInFlight(h.store.db, 'op_joined', 1, OWNER, NOW), true)
      // no turn of the loop since: the 20 ms linger cannot have appended them on its own
      assert.deepEqual(committedRows(h), ['read window 1', 'write target 1'])
      await audit.flush()
      assert.deepEqual(committedRows(h), ['read window 1', 'write target 1'], 'written once')
      assert.equal((await audit.verify()).ok, true)
    } finally {
      await h.close()
    }
  })

  test('a transaction that rolls back after they joined writes none of them; they are appended after, once each, in order', async () => {
    const h = await createHarness('sqlite', { count: 1 })
    try {
      const audit = createAuditLog({ store: h.store, log: collectingLog() })
      audit.recordCall(call('a'))
      audit.recordCall(call('b'))
      let joined: JoinedWrites | null = null
      const joiner = commitJoinerOf(h.store.db)
      assert.ok(joiner, 'the audit log of a SQLite store offers to join its commits')
      await assert.rejects(
        h.store.db.transaction().execute(async (trx) => {
          joined = await joiner.join(trx)
          throw new Error('the ledger failed after the audit rows joined')
        }),
        /ledger failed/,
      )
      assert.ok(joined, 'the queued rows joined the transaction')
      assert.deepEqual(committedRows(h), [])
      // a run row asked for meanwhile waits for the joined rows' fate, and goes after them
      const recorded = audit.record({ actor: null, action: 'run row c', summary: {} })
      let settled = false
      void recorded.then(() => (settled = true))
      await nextTurn()
      assert.equal(settled, false, 'not appended ahead of rows queued before it')
      ;(joined as JoinedWrites).rolledBack(new Error('rolled back'))
      audit.recordCall(call('d'))
      const entry = await recorded
      await audit.flush()
      assert.deepEqual(committedRows(h), ['a', 'b', 'run row c', 'd'])
      assert.equal(entry.seq, 3)
      assert.equal((await audit.verify()).ok, true)
    } finally {
      await h.close()
    }
  })

  test('rows the chain refuses inside the ledger transaction leave its in-flight marks committed, and are reported', async () => {
    const h = await createHarness('sqlite', { count: 1 })
    try {
      await seedOperation(h, 'op_refused', 1)
      const log = collectingLog()
      const audit = createAuditLog({ store: h.store, log })
      await sql`create trigger refuse_audit before insert on audit_events begin select raise(abort, 'audit refused by the test'); end`.execute(h.store.db)
      audit.recordCall(call('refused'))
      assert.equal(await markInFlight(h.store.db, 'op_refused', 1, OWNER, NOW), true)
      const target = await h.store.db.selectFrom('operation_targets').select('state').where('operation_id', '=', 'op_refused').executeTakeFirstOrThrow()
      assert.equal(target.state, 'in_flight', 'the mark committed although the joined rows failed')
      await audit.flush()
      assert.deepEqual(committedRows(h), [])
      assert.ok(log.errors.some((m) => /could not be appended/.test(m)), `reported: ${log.errors.join('; ')}`)
      await sql`drop trigger refuse_audit`.execute(h.store.db)
      audit.recordCall(call('after'))
      await audit.flush()
      assert.deepEqual(committedRows(h), ['after'])
      assert.equal((await audit.verify()).ok, true)
    } finally {
      await h.close()
    }
  })

  test('property: whatever interleaving of call rows, run rows and ledger commits, the chain holds every row once, in the order queued', async () => {
    const h = await createHarness('sqlite', { count: 1 })
    let round = 0
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.constantFrom('call', 'run', 'mark', 'turn'), { minLength: 1, maxLength: 30 }), async (steps) => {
          round += 1
          const operationId = `op_prop_${round}`
          await h.store.db.deleteFrom('audit_events').execute()
          await h.store.db.deleteFrom('kv').where('key', 'like', 'audit%').execute()
          await seedOperation(h, operationId, steps.length)
          const audit = createAuditLog({ store: h.store, log: collectingLog(), maxBatch: 3 })
          const expected: string[] = []
          const waits: Promise<unknown>[] = []
          for (const [i, step] of steps.entries()) {
            if (step === 'call') (audit.recordCall(call(`call ${i}`)), expected.push(`call ${i}`))
            else if (step === 'run') (waits.push(audit.record({ actor: null, action: `run ${i}`, summary: {} })), expected.push(`run ${i}`))
            else if (step === 'mark') waits.push(markInFlight(h.store.db, operationId, i + 1, OWNER, NOW))
            else await nextTurn()
          }
          await Promise.all(waits)
          await audit.flush()
          assert.deepEqual(committedRows(h), expected)
          assert.equal((await audit.verify()).ok, true)
        }),
        { numRuns: 40 },
      )
    } finally {
      await h.close()
    }
  })
})
