import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { sql, type KyselyPlugin } from 'kysely'
import {
  AUDIT_GENESIS_HASH,
  createAuditLog,
  hashAuditRow,
  verifyAuditChain,
  type AuditLog,
  type AuditLogLogger,
  type VerifyResult,
} from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import { createStore, type AuditEventRow, type Store } from '../../src/store/index.js'
import { STORE_KINDS, createTestStore, type StoreKind, type TestStore } from '../support/stores.js'

const actor = (principal: string, role: Actor['role'], surface: Actor['surface'] = 'mcp'): Actor => ({
  principal,
  name: `${principal}-name`,
  role,
  scopes: { resources: '*', actions: '*' },
  surface,
})
const AGENT = actor('prn_agent_a', 'agent', 'mcp')
const OTHER_AGENT = actor('prn_agent_b', 'agent', 'http')
const REVIEWER = actor('prn_alice', 'reviewer', 'ui')
const OTHER_REVIEWER = actor('prn_bob', 'reviewer', 'ui')

const COLUMNS = ['seq', 'level', 'at', 'principal', 'surface', 'action', 'summary', 'selection_id', 'plan_id', 'operation_id', 'target_id', 'details', 'prev_hash', 'hash'] as const
type Column = (typeof COLUMNS)[number]

const silent: AuditLogLogger = { error: () => undefined }

/** A small but varied chain: run events with and without ids, call events with and without targets. */
async function seedChain(audit: AuditLog, rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await audit.record({ actor: AGENT, action: 'mcp:create_selection', selection_id: `sel_${i}`, summary: { resource: 'subscriptions', filter: { status: 'past_due' } } })
    await audit.record({ actor: REVIEWER, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, selection_id: `sel_${i}`, details: { decision: 'approve', plan_digest: `sha256:${i}` } })
    await audit.record({ actor: null, action: 'expire_selections', summary: { expired: i } })
    audit.recordCall({ source: 'db', method: 'SELECT', endpoint: 'subscriptions', status: null, outcome: 'ok', durationMs: 2, operation_id: `op_${i}` })
    audit.recordCall({ source: 'db', method: 'UPDATE', endpoint: 'subscriptions', targetId: `sub_${i}`, status: 200, outcome: 'written', durationMs: 3, operation_id: `op_${i}`, selection_digest: `sha256:sel${i}` })
  }
  await audit.flush()
}

async function rowAt(store: Store, seq: number): Promise<AuditEventRow> {
  return store.db.selectFrom('audit_events').selectAll().where('seq', '=', seq).executeTakeFirstOrThrow()
}

async function setColumn(store: Store, seq: number, column: Column, value: string | number | null): Promise<void> {
  await sql`update audit_events set ${sql.ref(column)} = ${value} where seq = ${seq}`.execute(store.db)
}

async function putRow(store: Store, seq: number, row: AuditEventRow): Promise<void> {
  const { seq: _ignored, ...rest } = row
  await store.db.updateTable('audit_events').set(rest).where('seq', '=', seq).execute()
}

/** A different value for a column, valid for its type and constraints. */
function tamperedValue(row: AuditEventRow, column: Column, variant: number): string | number | null {
  const text = (v: string | null) => (v === null ? `x${variant}` : variant % 2 === 0 ? null : `${v}x`)
  switch (column) {
    case 'seq':
      return variant % 2 === 0 ? 1_000_000 + row.seq : -row.seq
    case 'level':
      return row.level === 'run' ? 'call' : 'run'
    case 'at':
      return new Date(Date.parse(row.at) + variant + 1).toISOString()
    case 'surface':
    case 'action':
      return `${row[column]}~${variant}`
    case 'summary':
      return JSON.stringify({ tampered: variant })
    case 'prev_hash':
    case 'hash':
      return `sha256:${createHash('sha256').update(`forged ${variant}`).digest('hex')}`
    default:
      return text(row[column])
  }
}

function assertBad(result: VerifyResult, problem: string, seq: number, context = ''): void {
  assert.equal(result.ok, false, `verify should fail ${context}`)
  if (result.status !== 'broken') return
  assert.equal(result.problem, problem, `${context}: ${result.message}`)
  assert.equal(result.first_bad_seq, seq, `${context}: ${result.message}`)
  assert.match(result.message, new RegExp(`\\b${Math.abs(seq)}\\b`))
}

/** Tamper, check, restore, and prove the restore gave back a valid chain (so runs are independent). */
async function tampered(store: Store, mutate: () => Promise<void>, restore: () => Promise<void>, check: (result: VerifyResult) => void | Promise<void>): Promise<void> {
  await mutate()
  try {
    await check(await verifyAuditChain(store.db, { pageSize: 4 }))
    await check(await verifyAuditChain(store.db))
  } finally {
    await restore()
  }
  const again = await verifyAuditChain(store.db, { pageSize: 4 })
  assert.equal(again.ok, true, again.status !== 'broken' ? '' : `restore left the chain broken: ${again.message}`)
}

/** Counts the statements a store handle runs. */
function counted(store: Store): { store: Store; count(): number } {
  let n = 0
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    // called once per statement executed (transformQuery also sees every subquery)
    transformResult: async (args) => {
      n += 1
      return args.result
    },
  }
  return { store: { ...store, db: store.db.withPlugin(plugin) }, count: () => n }
}

for (const kind of STORE_KINDS) {
  describe(`audit log (${kind})`, () => {
    describe('a tamper-evident chain', () => {
      let ts: TestStore
      let audit: AuditLog
      let last: number
      before(async () => {
        ts = await createTestStore(kind)
        audit = createAuditLog({ store: ts.store, log: silent })
        await seedChain(audit, 6)
        last = 30
      })
      after(() => ts?.drop())

      test('appends run and call rows as one gap-free chain that verifies', async () => {
        const rows = await ts.store.db.selectFrom('audit_events').selectAll().orderBy('seq').execute()
        assert.equal(rows.length, last)
        assert.deepEqual(rows.map((r) => r.seq), Array.from({ length: last }, (_, i) => i + 1))
        assert.equal(rows[0]!.prev_hash, AUDIT_GENESIS_HASH)
        rows.forEach((row, i) => {
          assert.equal(row.hash, hashAuditRow(row))
          if (i > 0) assert.equal(row.prev_hash, rows[i - 1]!.hash)
        })
        assert.deepEqual(new Set(rows.map((r) => r.level)), new Set(['run', 'call']))
        const call = rows.find((r) => r.level === 'call' && r.target_id === 'sub_2')!
        assert.equal(call.action, 'UPDATE subscriptions')
        assert.equal(call.operation_id, 'op_2')
        assert.deepEqual(JSON.parse(call.summary), { source: 'db', method: 'UPDATE', endpoint: 'subscriptions', status: 200, outcome: 'written', duration_ms: 3, selection_digest: 'sha256:sel2' })
        const result = await audit.verify()
        assert.deepEqual(result, { ...result, ok: true, rows: last, last_seq: last, last_hash: rows[last - 1]!.hash, guarantee: 'unsigned', signed_from_seq: null })
        assert.match((result as { statement: string }).statement, /only accidental or partial tampering|accidental or partial tampering only/)
      })

      test('changing any column of any row fails verify, naming that row', async () => {
        const example = (column: Column, row: number) => [{ row, column, variant: row }] as [{ row: number; column: Column; variant: number }]
        await fc.assert(
          fc.asyncProperty(fc.record({ row: fc.integer({ min: 1, max: last }), column: fc.constantFrom(...COLUMNS), variant: fc.nat(1000) }), async ({ row, column, variant }) => {
            const original = await rowAt(ts.store, row)
            const value = tamperedValue(original, column, variant)
            const movedTo = column === 'seq' ? (value as number) : row
            await tampered(
              ts.store,
              () => setColumn(ts.store, row, column, value),
              () => (column === 'seq' ? setColumn(ts.store, movedTo, 'seq', row) : setColumn(ts.store, row, column, original[column])),
              (result) => assertBad(result, 'altered', row, `${column} of row ${row} set to ${JSON.stringify(value)}`),
            )
          }),
          {
            numRuns: 12,
            // every column at least once, at the first, the last and some middle rows, both kinds of seq change
            examples: [...COLUMNS.map((c, i) => example(c, [1, last, 2 + (i % (last - 2))][i % 3]!)), example('seq', 1), [{ row: last, column: 'seq', variant: 1 }], [{ row: 7, column: 'seq', variant: 3 }]],
          },
        )
      })

      test('a row rewritten with a recomputed hash breaks the link to the next row', async () => {
        const original = await rowAt(ts.store, 9)
        const forged = { ...original, summary: JSON.stringify({ forged: true }) }
        forged.hash = hashAuditRow(forged)
        await tampered(ts.store, () => putRow(ts.store, 9, forged), () => putRow(ts.store, 9, original), (r) => assertBad(r, 'altered', 9))
        // the last row has no next row: the chain head catches it
        const tail = await rowAt(ts.store, last)
        const forgedTail = { ...tail, action: 'nothing to see' }
        forgedTail.hash = hashAuditRow(forgedTail)
        await tampered(ts.store, () => putRow(ts.store, last, forgedTail), () => putRow(ts.store, last, tail), (r) => assertBad(r, 'altered', last))
      })

      test('a deleted row is reported as removed, naming the row after the gap', async () => {
        for (const seq of [1, 12, last - 1]) {
          const original = await rowAt(ts.store, seq)
          await tampered(
            ts.store,
            () => ts.store.db.deleteFrom('audit_events').where('seq', '=', seq).execute().then(() => undefined),
            () => ts.store.db.insertInto('audit_events').values(original).execute().then(() => undefined),
            (r) => assertBad(r, 'removed', seq + 1, `row ${seq} deleted`),
          )
        }
        const removed = await ts.store.db.selectFrom('audit_events').selectAll().where('seq', '>=', 14).where('seq', '<=', 16).execute()
        await tampered(
          ts.store,
          () => ts.store.db.deleteFrom('audit_events').where('seq', '>=', 14).where('seq', '<=', 16).execute().then(() => undefined),
          () => ts.store.db.insertInto('audit_events').values(removed).execute().then(() => undefined),
          (r) => assertBad(r, 'removed', 17, 'rows 14..16 deleted'),
        )
        // rows cut from the end leave a valid but shorter chain: the head recorded by the last append shows it
        const tail = await ts.store.db.selectFrom('audit_events').selectAll().where('seq', '>', last - 2).execute()
        await tampered(
          ts.store,
          () => ts.store.db.deleteFrom('audit_events').where('seq', '>', last - 2).execute().then(() => undefined),
          () => ts.store.db.insertInto('audit_events').values(tail).execute().then(() => undefined),
          (r) => assertBad(r, 'removed', last - 1, 'last two rows deleted'),
        )
      })

      test('two rows with swapped contents are reported as reordered, naming the first', async () => {
        for (const [a, b] of [
          [3, 11],
          [5, 6],
          [last - 1, last],
          [1, 2],
        ] as const) {
          const rowA = await rowAt(ts.store, a)
          const rowB = await rowAt(ts.store, b)
          const swap = async (x: AuditEventRow, y: AuditEventRow) => {
            await putRow(ts.store, a, x)
            await putRow(ts.store, b, y)
          }
          await tampered(ts.store, () => swap(rowB, rowA), () => swap(rowA, rowB), (r) => assertBad(r, 'reordered', a, `rows ${a} and ${b} swapped`))
        }
      })

      test('a row written past the head by something else is reported as inserted', async () => {
        const previous = await rowAt(ts.store, last)
        const forged = { ...previous, seq: last + 1, prev_hash: previous.hash, action: 'forged' }
        forged.hash = 'sha256:' + 'f'.repeat(64)
        await tampered(
          ts.store,
          () => ts.store.db.insertInto('audit_events').values(forged).execute().then(() => undefined),
          () => ts.store.db.deleteFrom('audit_events').where('seq', '=', last + 1).execute().then(() => undefined),
          (r) => assertBad(r, 'inserted', last + 1),
        )
        await tampered(
          ts.store,
          () => ts.store.db.insertInto('audit_events').values({ ...forged, seq: 0 }).execute().then(() => undefined),
          () => ts.store.db.deleteFrom('audit_events').where('seq', '=', 0).execute().then(() => undefined),
          (r) => assertBad(r, 'inserted', 0),
        )
        // past the head with a gap before it: an insertion, not rows removed before it
        await tampered(
          ts.store,
          () => ts.store.db.insertInto('audit_events').values({ ...forged, seq: last + 5 }).execute().then(() => undefined),
          () => ts.store.db.deleteFrom('audit_events').where('seq', '=', last + 5).execute().then(() => undefined),
          (r) => assertBad(r, 'inserted', last + 5),
        )
      })

      test('the export is one line per row, in order, verifiable without the database', async () => {
        const lines: string[] = []
        for await (const line of audit.exportNdjson()) lines.push(line)
        // the last line holds the chain head the rows end at
        const end = JSON.parse(lines.pop()!) as { format: string; rows: number; head: { seq: number; hash: string } }
        assert.equal(lines.length, last)
        assert.deepEqual([end.format, end.rows, end.head.seq, end.head.hash], ['warrant-audit-export/1', last, last, (JSON.parse(lines.at(-1)!) as AuditEventRow).hash])
        let prev = AUDIT_GENESIS_HASH
        lines.forEach((line, i) => {
          assert.ok(line.endsWith('\n'))
          const row = JSON.parse(line) as AuditEventRow
          assert.equal(row.seq, i + 1)
          assert.equal(row.prev_hash, prev)
          assert.equal(hashAuditRow(row), row.hash)
          prev = row.hash
        })
      })
    })

    test('concurrent appends from many promises keep one gap-free chain', async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        const audits = [createAuditLog({ store, log: silent }), createAuditLog({ store, log: silent })]
        const writes: Promise<unknown>[] = []
        for (let i = 0; i < 200; i++) {
          const audit = audits[i % 2]!
          if (i % 3 === 0) writes.push(audit.record({ actor: AGENT, action: 'mcp:search', summary: { i } }))
          else audit.recordCall({ source: 'db', method: 'SELECT', endpoint: 'subscriptions', status: null, outcome: 'ok', durationMs: 1, targetId: `t${i}` })
        }
        const entries = (await Promise.all(writes)) as { seq: number }[]
        await Promise.all(audits.map((a) => a.flush()))
        assert.equal(new Set(entries.map((e) => e.seq)).size, entries.length)
        const result = await createAuditLog({ store }).verify()
        assert.ok(result.ok && result.rows === 200, JSON.stringify(result))
      } finally {
        await drop()
      }
    })

    test('call rows made in separate turns of the loop are appended together, after a short wait or with the next run event, and the chain holds', async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        const audit = createAuditLog({ store, log: silent })
        const seen: string[] = []
        const appended = async () => Number((await store.db.selectFrom('audit_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
        for (let i = 0; i < 20; i++) {
          audit.recordCall({ source: 'db', method: 'UPDATE', endpoint: 'subscriptions', targetId: `t${i}`, status: null, outcome: 'written', durationMs: 1, operation_id: 'op_1' })
          await new Promise((r) => setImmediate(r)) // each call in its own turn, as an executor's answers come
        }
        // appended a microtask after each call (no waiting), all 20 would be there; waiting, none or few are
        const afterTurns = await appended()
        assert.ok(afterTurns < 20, `${afterTurns} of 20 call rows appended one turn after each call`)
        // a run event does not wait: it is appended with every call row queued before it, in order
        const entry = await audit.record({ actor: AGENT, action: 'operation.finished', summary: {}, operation_id: 'op_1' })
        assert.equal(entry.seq, 21)
        for (let i = 0; i < 5; i++) audit.recordCall({ source: 'db', method: 'SELECT', endpoint: 'subscriptions', status: null, outcome: 'ok', durationMs: 1 })
        await new Promise((r) => setTimeout(r, 200))
        seen.push(`200 ms later: ${await appended()} rows`)
        await audit.flush()
        assert.deepEqual(seen, ['200 ms later: 26 rows'], 'call rows are appended after a short wait, without a flush')
        const rows = await store.db.selectFrom('audit_events').select(['seq', 'target_id', 'level']).orderBy('seq').execute()
        assert.deepEqual(rows.slice(0, 20).map((r) => r.target_id), Array.from({ length: 20 }, (_, i) => `t${i}`))
        assert.equal(rows[20]!.level, 'run')
        const result = await createAuditLog({ store }).verify()
        assert.ok(result.ok && result.rows === 26, JSON.stringify(result))
      } finally {
        await drop()
      }
    })

    test(kind === 'postgres' ? 'two store handles (two pools) append to one chain' : 'three processes append to one chain', async () => {
      const { store, url, drop } = await createTestStore(kind)
      try {
        const audit = createAuditLog({ store, log: silent })
        if (kind === 'postgres') {
          const second = await createStore({ url })
          try {
            const other = createAuditLog({ store: second, log: silent })
            const writes: Promise<unknown>[] = []
            for (let i = 0; i < 150; i++) {
              writes.push((i % 2 ? audit : other).record({ actor: AGENT, action: 'mcp:search', summary: { i } }))
              ;(i % 2 ? other : audit).recordCall({ source: 'db', method: 'SELECT', endpoint: 'subscriptions', status: null, outcome: 'ok', durationMs: 1 })
            }
            await Promise.all(writes)
            await Promise.all([audit.flush(), other.flush()])
          } finally {
            await second.close()
          }
          const result = await audit.verify()
          assert.ok(result.ok && result.rows === 300, JSON.stringify(result))
        } else {
          const worker = fileURLToPath(new URL('./append-worker.ts', import.meta.url))
          const run = (label: string) => promisify(execFile)(process.execPath, ['--import', 'tsx', worker, url, '80', label], { cwd: fileURLToPath(new URL('../..', import.meta.url)) })
          const local = (async () => {
            for (let i = 0; i < 80; i++) {
              await audit.record({ actor: AGENT, action: 'mcp:search', summary: { i } })
              await new Promise((resolve) => setTimeout(resolve, 2))
            }
          })()
          const [a, b] = await Promise.all([run('w1'), run('w2'), local])
          assert.equal(a.stderr + b.stderr, '')
          const result = await audit.verify()
          assert.ok(result.ok && result.rows === 240, JSON.stringify(result))
          const actions = await store.db.selectFrom('audit_events').select(['action', 'surface']).execute()
          assert.equal(actions.filter((r) => r.action === 'worker:w1').length, 40)
          assert.equal(actions.filter((r) => r.surface === 'upstream').length, 80)
        }
      } finally {
        await drop()
      }
    })

    describe('questions', () => {
      let ts: TestStore
      let audit: AuditLog
      before(async () => {
        ts = await createTestStore(kind, { clock: (() => { let t = Date.parse('2025-01-31T12:00:00.000Z'); return () => new Date((t += 1000)) })() })
        audit = createAuditLog({ store: ts.store, log: silent })
        await audit.record({ actor: AGENT, action: 'mcp:create_selection', selection_id: 'sel_1', summary: { resource: 'subscriptions', filter: { status: 'past_due' } } })
        await audit.record({ actor: AGENT, action: 'mcp:propose_change', selection_id: 'sel_1', plan_id: 'plan_1', summary: { action: 'pause_collection' } })
        await audit.record({ actor: OTHER_AGENT, action: 'POST /v1/plans', selection_id: 'sel_1', plan_id: 'plan_2', summary: { action: 'resume_collection' } })
        await audit.record({ actor: REVIEWER, action: 'POST /v1/plans/{id}/approvals', selection_id: 'sel_1', plan_id: 'plan_1', details: { decision: 'approve', plan_digest: 'sha256:p1', expires_at: '2025-01-31T12:15:00.000Z' } })
        await audit.record({ actor: OTHER_REVIEWER, action: 'POST /v1/plans/{id}/approvals', selection_id: 'sel_1', plan_id: 'plan_2', details: { decision: 'approve', plan_digest: 'sha256:p2' } })
        await audit.record({ actor: AGENT, action: 'mcp:commit_change', plan_id: 'plan_1', operation_id: 'op_1', summary: { idempotency_key: 'k1' } })
        const call = { source: 'billing-db', endpoint: 'subscriptions', durationMs: 4 }
        // what an executor hands its connector: a listener bound to the operation (used detached)
        const onCall = audit.callRecorder({ operation_id: 'op_1', plan_id: 'plan_1', selection_digest: 'sha256:sel1' })
        onCall({ ...call, method: 'SELECT', targetId: 'sub_1', status: null, outcome: 'ok' })
        onCall({ ...call, method: 'UPDATE', targetId: 'sub_1', status: null, outcome: 'written' })
        onCall({ ...call, method: 'UPDATE', targetId: 'sub_2', status: null, outcome: 'conflict' })
        onCall({ ...call, method: 'UPDATE', targetId: 'sub_3', status: null, outcome: 'written' })
        onCall({ ...call, method: 'UPDATE', targetId: 'sub_4', status: null, outcome: 'unknown' })
        audit.recordCall({ ...call, operation_id: 'op_2', plan_id: 'plan_2', method: 'UPDATE', targetId: 'sub_9', status: null, outcome: 'written' })
        await audit.flush()
        await audit.record({ actor: null, action: 'operation_finished', operation_id: 'op_1', details: { state: 'partially_failed' } })
      })
      after(() => ts?.drop())

      test('whoAsked names who asked, on which surface, and who approved, in a fixed number of queries', async () => {
        const c = counted(ts.store)
        const answer = await createAuditLog({ store: c.store }).whoAsked('op_1')
        // the operation's plan and the rows naming another, the plans' selections and the rows naming another, the events
        assert.equal(c.count(), 5)
        assert.deepEqual(answer.plan_ids, ['plan_1'])
        assert.deepEqual(answer.selection_ids, ['sel_1'])
        assert.deepEqual(
          answer.events.map((e) => e.action),
          ['mcp:create_selection', 'mcp:propose_change', 'POST /v1/plans/{id}/approvals', 'mcp:commit_change', 'operation_finished'],
        )
        const agent = answer.requesters.find((r) => r.principal === AGENT.principal)!
        assert.deepEqual(agent.surfaces, ['mcp'])
        assert.equal(agent.role, 'agent')
        assert.deepEqual(agent.actions, ['mcp:create_selection', 'mcp:propose_change', 'mcp:commit_change'])
        assert.ok(!answer.requesters.some((r) => r.principal === OTHER_AGENT.principal), 'another plan on the same selection is not part of the answer')
        assert.equal(answer.approvals.length, 1)
        assert.deepEqual(
          { decision: answer.approvals[0]!.decision, principal: answer.approvals[0]!.principal, name: answer.approvals[0]!.name, role: answer.approvals[0]!.role, surface: answer.approvals[0]!.surface, plan_id: answer.approvals[0]!.plan_id },
          { decision: 'approve', principal: REVIEWER.principal, name: REVIEWER.name, role: 'reviewer', surface: 'ui', plan_id: 'plan_1' },
        )
        assert.equal(answer.truncated, false)
      })

      test('recordsChanged lists the writes that succeeded, in one query', async () => {
        const c = counted(ts.store)
        const answer = await createAuditLog({ store: c.store }).recordsChanged('op_1')
        assert.equal(c.count(), 1)
        assert.deepEqual(
          answer.records.map((r) => [r.target_id, r.method, r.endpoint, r.outcome, r.source]),
          [
            ['sub_1', 'UPDATE', 'subscriptions', 'written', 'billing-db'],
            ['sub_3', 'UPDATE', 'subscriptions', 'written', 'billing-db'],
          ],
        )
        assert.ok(answer.records.every((r) => /^\d{4}-\d\d-\d\dT/.test(r.at) && r.status === null))
        assert.equal(answer.next_cursor, null)
        const withUnknown = await audit.recordsChanged('op_1', { include_unknown: true })
        assert.deepEqual(withUnknown.records.map((r) => r.target_id), ['sub_1', 'sub_3', 'sub_4'])
        const paged = await audit.recordsChanged('op_1', { limit: 1 })
        assert.equal(paged.records.length, 1)
        assert.deepEqual((await audit.recordsChanged('op_1', { after_seq: paged.next_cursor! })).records.map((r) => r.target_id), ['sub_3'])
        assert.deepEqual((await audit.recordsChanged('op_nope')).records, [])
      })

      test('query filters by operation, plan, principal, level and time, and pages by seq', async () => {
        const ids = async (filter: Parameters<AuditLog['query']>[0]) => (await audit.query(filter)).events.map((e) => e.seq)
        assert.deepEqual(await ids({ operation_id: 'op_1', level: 'run' }), [6, 13])
        const calls = (await audit.query({ operation_id: 'op_1', level: 'call' })).events
        assert.equal(calls.length, 5)
        assert.ok(calls.every((e) => e.plan_id === 'plan_1' && (e.summary as { selection_digest: string }).selection_digest === 'sha256:sel1'))
        assert.deepEqual(await ids({ plan_id: 'plan_2' }), [3, 5, 12])
        assert.deepEqual(await ids({ principal: REVIEWER.principal }), [4])
        assert.deepEqual(await ids({ selection_id: 'sel_1', principal: AGENT.principal }), [1, 2])
        assert.deepEqual(await ids({ since: '2025-01-31T12:00:02.000Z', until: '2025-01-31T12:00:04.000Z' }), [2, 3])
        const seen: number[] = []
        let cursor: number | null | undefined
        let pages = 0
        do {
          const page = await audit.query({ limit: 5, ...(cursor ? { after_seq: cursor } : {}) })
          assert.ok(page.events.length <= 5)
          seen.push(...page.events.map((e) => e.seq))
          cursor = page.next_cursor
          pages++
        } while (cursor !== null)
        assert.deepEqual(seen, Array.from({ length: 13 }, (_, i) => i + 1))
        assert.equal(pages, 3)
        const event = (await audit.query({ principal: REVIEWER.principal })).events[0]!
        assert.deepEqual(event.details, { actor: { name: REVIEWER.name, role: 'reviewer' }, decision: 'approve', plan_digest: 'sha256:p1', expires_at: '2025-01-31T12:15:00.000Z' })
      })
    })

    test('secrets in a summary or details are redacted before they reach the database', async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        const audit = createAuditLog({ store })
        const entry = await audit.record({
          actor: AGENT,
          action: 'POST /v1/resources/{resource}/search',
          summary: {
            authorization: 'Bearer s3cr3t-bearer',
            filter: { card_token: 'tok_live_4242', status: 'past_due' },
            headers: [{ 'X-Api-Key': 'key-123' }],
            password: 'hunter2',
            echoed: 'Bearer another-s3cret',
            token_id: 'tok_abc',
          },
          details: { client_secret: 'shh', access_token: 'at-1' },
        })
        assert.deepEqual(entry.summary, {
          authorization: '[redacted]',
          filter: { card_token: '[redacted]', status: 'past_due' },
          headers: [{ 'X-Api-Key': '[redacted]' }],
          password: '[redacted]',
          echoed: '[redacted]',
          token_id: 'tok_abc',
        })
        const raw = JSON.stringify(await store.db.selectFrom('audit_events').selectAll().execute())
        for (const secret of ['s3cr3t-bearer', 'tok_live_4242', 'key-123', 'hunter2', 'another-s3cret', 'shh', 'at-1']) assert.ok(!raw.includes(secret), secret)
        assert.equal((await audit.verify()).ok, true)
      } finally {
        await drop()
      }
    })

    test('a NUL byte the database could not store is kept in canonical form, and its batch with it', async () => {
        const { store, drop } = await createTestStore(kind)
        try {
          const logged: object[] = []
          const audit = createAuditLog({ store, log: { error: (fields) => logged.push(fields) } })
          for (const endpoint of ['subscriptions', 'bad\u0000endpoint', 'subscriptions/{id}'])
            audit.recordCall({ source: 'db', method: 'UPDATE', endpoint, status: null, outcome: 'written', durationMs: 1 })
          await audit.flush()
          assert.equal(logged.length, 0)
          const rows = await store.db.selectFrom('audit_events').select('action').orderBy('seq').execute()
          assert.deepEqual(rows.map((r) => r.action), ['UPDATE subscriptions', 'UPDATE bad\uFFFDendpoint', 'UPDATE subscriptions/{id}'])
          assert.equal((await audit.verify()).ok, true)
        } finally {
          await drop()
        }
      })

    test('recordCall never throws or rejects when the store is closed: it logs', async () => {
      const { store, drop } = await createTestStore(kind)
      const logged: { fields: object; message: string }[] = []
      const audit = createAuditLog({ store, log: { error: (fields, message) => logged.push({ fields, message }) } })
      const unhandled: unknown[] = []
      const onUnhandled = (reason: unknown) => unhandled.push(reason)
      process.on('unhandledRejection', onUnhandled)
      try {
        await drop()
        for (const targetId of ['sub_1', 'sub_2', 'sub_3'])
          assert.doesNotThrow(() => audit.recordCall({ source: 'db', method: 'UPDATE', endpoint: 'subscriptions', targetId, status: null, outcome: 'written', durationMs: 1, operation_id: 'op_1' }))
        await audit.flush()
        await new Promise((resolve) => setTimeout(resolve, 20))
        assert.equal(logged.length, 1, 'one report for the batch, not one per row')
        assert.equal((logged[0]!.fields as { dropped: number }).dropped, 3)
        assert.match(JSON.stringify((logged[0]!.fields as { events: unknown }).events), /sub_2/)
        assert.deepEqual(unhandled, [])
        await assert.rejects(audit.record({ actor: AGENT, action: 'mcp:search' }))
      } finally {
        process.off('unhandledRejection', onUnhandled)
      }
    })
  })
}
