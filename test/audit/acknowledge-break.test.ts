import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import {
  CHAIN_HEAD_KEY,
  assertChainKeyConfigured,
  createAuditLog,
  hashAuditRow,
  parseAuditKeys,
  verifyAuditChain,
  verifyAuditExport,
  type AuditKeyring,
  type AuditLog,
  type VerifyResult,
} from '../../src/audit/index.js'
import { storedRow } from '../../src/audit/chain.js'
import { verifyResultSchema } from '../../src/api/routes/audit.js'
import { serverEnvWith, startUntilListening } from '../operations/support/serve-process.js'
import { createCliWorkspaceOn } from '../support/cli-config.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'
import { K1, alter, lastSeq, operator, rowCount, silent } from '../support/tampered-chain.js'


async function appendSome(audit: AuditLog, n: number, tag: string): Promise<void> {
  for (let i = 0; i < n; i++) await audit.record({ actor: operator, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${tag}${i}`, summary: { i } })
}

function broken(result: VerifyResult): { seq: number; problem: string; message: string } {
  assert.equal(result.status, 'broken', JSON.stringify(result))
  return result.status === 'broken' ? { seq: result.first_bad_seq, problem: result.problem, message: result.message } : { seq: -1, problem: '', message: '' }
}

/**
 * A tampered chain left the gateway with no way back but a backup: `serve`, `mcp` and every writing command refused
 * to start (an altered last row, a removed head), and `verify` named the same break for ever, hiding any later one
 * behind it. `acknowledge` records the break verify names in a signed row and the chain continues from it: the
 * gateway starts, verify says `ok_with_acknowledged_breaks` (never `ok` again) and still checks every other row.
 */
for (const kind of STORE_KINDS) {
  describe(`acknowledging a broken audit chain (${kind})`, () => {
    const keyring: AuditKeyring = parseAuditKeys(K1, 'test')
    let ts: TestStore
    let audit: AuditLog
    before(async () => {
      ts = await createTestStore(kind)
      audit = createAuditLog({ store: ts.store, keyring, log: silent })
      await appendSome(audit, 6, 'a')
    })
    after(() => ts?.drop())

    test('a clean chain is refused: nothing to acknowledge, nothing written', async () => {
      const rows = await rowCount(ts.store)
      await assert.rejects(audit.acknowledge({ at: 1, reason: 'just because', actor: operator }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'conflict')
        assert.match(error.message, /no unacknowledged break \(verify: ok\)/)
        return true
      })
      assert.equal(await rowCount(ts.store), rows)
    })

    test('the altered last row: start refused; wrong seq, empty reason and no key refused; acknowledged, the gateway starts, verify reports it', async () => {
      const last = await lastSeq(ts.store)
      await alter(ts.store, last, '{"i":"forged"}')
      await assert.rejects(assertChainKeyConfigured(ts.store.db, keyring, undefined), /is not the key that signed|does not verify/)
      assert.deepEqual(broken(await audit.verify()).seq, last)
      const rows = await rowCount(ts.store)

      await assert.rejects(audit.acknowledge({ at: 2, reason: 'ops', actor: operator }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'invalid_request')
        assert.match(error.message, new RegExp(`--at 2 is not the chain's first bad row: verify reports seq ${last} \\(altered`))
        return true
      })
      await assert.rejects(audit.acknowledge({ at: last, reason: '   ', actor: operator }), /give a reason/)
      const keyless = createAuditLog({ store: ts.store, log: silent })
      await assert.rejects(keyless.acknowledge({ at: last, reason: 'ops', actor: operator }), /no audit key is configured/)
      assert.equal(await rowCount(ts.store), rows, 'a refused acknowledgement wrote nothing')

      const stored = await ts.store.db.selectFrom('audit_events').select('hash').where('seq', '=', last).executeTakeFirstOrThrow()
      const ack = await audit.acknowledge({ at: last, reason: 'INC-42: summary edited by a DBA, original in the ticket', actor: operator })
      assert.equal(ack.seq, last)
      assert.equal(ack.problem, 'altered')
      assert.equal(ack.stored_hash, stored.hash)
      assert.equal(ack.acknowledged_at_seq, last + 1)
      assert.equal(ack.head_found?.seq, last)
      assert.equal(ack.by, 'local operator ops')

      await assertChainKeyConfigured(ts.store.db, keyring, undefined)
      await appendSome(audit, 2, 'b')
      const result = await audit.verify()
      assert.equal(result.status, 'ok_with_acknowledged_breaks', JSON.stringify(result))
      assert.equal(result.ok, false)
      assert.deepEqual(
        result.acknowledged_breaks.map((b) => [b.seq, b.problem, b.acknowledged_at_seq, b.reason]),
        [[last, 'altered', last + 1, 'INC-42: summary edited by a DBA, original in the ticket']],
      )
      assert.equal('rows' in result && result.rows, await rowCount(ts.store))
      // the HTTP schema (GET /v1/audit/verify) describes the result as it is
      assert.equal(verifyResultSchema.safeParse(result).success, true, JSON.stringify(verifyResultSchema.safeParse(result).error))
      // a second acknowledgement of the same break is refused: verify names no break
      await assert.rejects(audit.acknowledge({ at: last, reason: 'again', actor: operator }), /no unacknowledged break \(verify: ok_with_acknowledged_breaks\)/)
    })

    test('a new break before or after the acknowledgement is still reported, and needs its own acknowledgement', async () => {
      const first = (await audit.verify()).acknowledged_breaks[0]!
      // after the acknowledgement (not the last row: an altered end is acknowledged first, see altered-last-row.test.ts)
      const later = (await lastSeq(ts.store)) - 1
      await alter(ts.store, later, '{"i":"later"}')
      const after1 = broken(await audit.verify())
      assert.deepEqual([after1.seq, after1.problem], [later, 'altered'])
      // before it: a row the walk passes on the way to the acknowledged one
      await alter(ts.store, 1, '{"i":"first"}')
      await audit.acknowledge({ at: 1, reason: 'INC-41', actor: operator })
      assert.deepEqual(broken(await audit.verify()).seq, later, 'the later break is still reported')
      await alter(ts.store, 2, '{"i":"earlier"}')
      assert.deepEqual(broken(await audit.verify()).seq, 2)
      await audit.acknowledge({ at: 2, reason: 'INC-43', actor: operator })
      assert.deepEqual(broken(await audit.verify()).seq, later, 'the later break is not hidden behind the acknowledged ones')
      await audit.acknowledge({ at: later, reason: 'INC-44', actor: operator })
      const both = await audit.verify()
      assert.equal(both.status, 'ok_with_acknowledged_breaks')
      assert.deepEqual(both.acknowledged_breaks.map((b) => b.seq).sort((a, b) => a - b), [1, 2, first.seq, later])
      // an acknowledged first row does not turn the guarantee into `partly_signed` from row 2
      assert.deepEqual(['guarantee' in both && both.guarantee, 'signed_from_seq' in both && both.signed_from_seq], ['signed', 1])

      // the acknowledged row changed again is a new break, said so
      await alter(ts.store, first.seq, '{"i":"forged twice"}')
      const again = broken(await audit.verify())
      assert.deepEqual([again.seq, again.problem], [first.seq, 'altered'])
      assert.match(again.message, /changed again since/)
      const parsed = verifyResultSchema.safeParse(await audit.verify())
      assert.equal(parsed.success, true, JSON.stringify(parsed.error))
    })
  })

  describe(`acknowledging a cut end whose head was removed (${kind})`, () => {
    const keyring: AuditKeyring = parseAuditKeys(K1, 'test')
    let ts: TestStore
    before(async () => {
      ts = await createTestStore(kind)
    })
    after(() => ts?.drop())

    test('the append refusal is lifted only by the acknowledgement; verify and an export report the cut', async () => {
      const audit = createAuditLog({ store: ts.store, keyring, log: silent })
      await appendSome(audit, 6, 'c')
      await sql`delete from audit_events where seq >= 5`.execute(ts.store.db)
      await ts.store.db.deleteFrom('kv').where('key', '=', CHAIN_HEAD_KEY).execute()
      await assert.rejects(assertChainKeyConfigured(ts.store.db, keyring, undefined), /head .*missing/)
      const cut = broken(await audit.verify())
      assert.deepEqual([cut.seq, cut.problem], [5, 'removed'])

      // a key of the chain's id that verifies none of its rows (a key file written anew) is the doubt, not the chain
      const replaced = createAuditLog({ store: ts.store, keyring: parseAuditKeys(`k1 ${'c3'.repeat(32)}`, 'test'), log: silent })
      await assert.rejects(replaced.acknowledge({ at: 1, reason: 'ops', actor: operator }), /verifies none of the rows the chain signed with that id/)
      assert.equal(await rowCount(ts.store), 4)

      const ack = await audit.acknowledge({ at: 5, reason: 'INC-50: restore failed, rows 5.. lost', actor: operator })
      assert.deepEqual([ack.head_found, ack.last_found?.seq, ack.stored_hash], [null, 4, null])
      await assertChainKeyConfigured(ts.store.db, keyring, undefined)
      await appendSome(audit, 1, 'd')
      const result = await verifyAuditChain(ts.store.db, { keyring })
      assert.equal(result.status, 'ok_with_acknowledged_breaks', JSON.stringify(result))
      assert.deepEqual(result.acknowledged_breaks.map((b) => [b.seq, b.problem]), [[5, 'removed']])

      async function* lines() {
        for await (const line of audit.exportNdjson()) yield line.slice(0, -1)
      }
      const exported = await verifyAuditExport(lines(), 'export', { keyring })
      assert.equal(exported.result.status, 'ok_with_acknowledged_breaks', JSON.stringify(exported.result))
      assert.deepEqual(exported.result.acknowledged_breaks.map((b) => [b.seq, b.reason]), [[5, 'INC-50: restore failed, rows 5.. lost']])
    })
  })
}

for (const kind of STORE_KINDS) {
  test(`a cut end under its signed head: the gap stays a gap after the acknowledgement, passed only at its seq (${kind})`, async () => {
    const keyring: AuditKeyring = parseAuditKeys(K1, 'test')
    const ts = await createTestStore(kind)
    try {
      const audit = createAuditLog({ store: ts.store, keyring, log: silent })
      await appendSome(audit, 6, 'g')
      await sql`delete from audit_events where seq >= 5`.execute(ts.store.db)
      assert.deepEqual(broken(await audit.verify()).seq, 5)
      await audit.acknowledge({ at: 5, reason: 'INC-60', actor: operator })
      // appended after the head (seq 6): rows 5..6 stay a visible gap, acknowledged
      const result = await audit.verify()
      assert.equal(result.status, 'ok_with_acknowledged_breaks', JSON.stringify(result))
      assert.deepEqual(result.acknowledged_breaks.map((b) => [b.seq, b.problem, b.acknowledged_at_seq]), [[5, 'removed', 7]])
      // a row removed later, elsewhere, is a new gap
      await sql`delete from audit_events where seq = 3`.execute(ts.store.db)
      assert.deepEqual([broken(await audit.verify()).seq, broken(await audit.verify()).problem], [4, 'removed'])
    } finally {
      await ts.drop()
    }
  })
}

for (const kind of STORE_KINDS) {
  test(`an acknowledged gap in the middle widened later is a new break (${kind})`, async () => {
    const keyring: AuditKeyring = parseAuditKeys(K1, 'test')
    const ts = await createTestStore(kind)
    try {
      const audit = createAuditLog({ store: ts.store, keyring, log: silent })
      await appendSome(audit, 8, 'w')
      await sql`delete from audit_events where seq in (4, 5)`.execute(ts.store.db)
      const gap = broken(await audit.verify())
      assert.deepEqual([gap.seq, gap.problem], [6, 'removed'])
      await audit.acknowledge({ at: 6, reason: 'INC-70', actor: operator })
      assert.equal((await audit.verify()).status, 'ok_with_acknowledged_breaks')
      // row 3 removed too: the gap the acknowledgement recorded (after row 3) is not this one (after row 2)
      await sql`delete from audit_events where seq = 3`.execute(ts.store.db)
      const wider = broken(await audit.verify())
      assert.deepEqual([wider.seq, wider.problem], [6, 'removed'])
    } finally {
      await ts.drop()
    }
  })
}

for (const kind of STORE_KINDS) {
  test(`a row inserted past the head, acknowledged, stays acknowledged once the head moves over it (${kind})`, async () => {
    const keyring: AuditKeyring = parseAuditKeys(K1, 'test')
    const ts = await createTestStore(kind)
    try {
      const audit = createAuditLog({ store: ts.store, keyring, log: silent })
      await appendSome(audit, 4, 'i')
      const last = await ts.store.db.selectFrom('audit_events').selectAll().where('seq', '=', 4).executeTakeFirstOrThrow()
      const unhashed = { ...storedRow(last), seq: 5, prev_hash: last.hash, summary: '{"i":"slipped in"}' }
      const { hash: _dropped, ...body } = unhashed
      await ts.store.db.insertInto('audit_events').values({ ...body, hash: hashAuditRow(body) }).execute()
      const inserted = broken(await audit.verify())
      assert.deepEqual([inserted.seq, inserted.problem], [5, 'inserted'])
      await audit.acknowledge({ at: 5, reason: 'INC-80', actor: operator })
      const result = await audit.verify()
      assert.equal(result.status, 'ok_with_acknowledged_breaks', JSON.stringify(result))
      assert.deepEqual(result.acknowledged_breaks.map((b) => [b.seq, b.problem]), [[5, 'inserted']])
    } finally {
      await ts.drop()
    }
  })
}

/** `warrant serve` as a real process: whether it listened. */
const serve = (configPath: string, cwd: string) => startUntilListening(['serve', '--config', configPath, '--port', '0'], cwd, serverEnvWith({}))

for (const kind of STORE_KINDS) {
  describe(`\`warrant audit acknowledge\` (real processes, ${kind})`, () => {
    let ws: Awaited<ReturnType<typeof createCliWorkspaceOn>>
    before(async () => {
      ws = await createCliWorkspaceOn(kind, { count: 3 })
    })
    after(() => ws?.drop())

    test('an altered row and a cut end with its head removed: serve refused, verify 3, each break acknowledged in turn, serve starts, verify and verify --file 6', { timeout: 300_000 }, async () => {
      for (const name of ['a', 'b', 'c', 'd', 'e']) assert.equal((await ws.warrant(['token', 'create', '--role', 'agent', '--name', name])).code, 0)
      const rows = await ws.withStore(lastSeq)
      await ws.withStore(async (store) => {
        await alter(store, 2, '{"edited":true}')
        await sql`delete from audit_events where seq >= ${rows}`.execute(store.db)
        await store.db.deleteFrom('kv').where('key', '=', CHAIN_HEAD_KEY).execute()
      })
      const refused = await serve(ws.configPath, ws.dir)
      assert.equal(refused.listened, false, refused.stdout)
      const verify = await ws.warrant(['audit', 'verify'])
      assert.equal(verify.code, 3, verify.stdout + verify.stderr)
      assert.match(verify.stdout, /BROKEN at seq 2 \(altered\)/)

      // the first bad row first, unless the end would be sealed: then the end, named
      const first = await ws.warrant(['audit', 'acknowledge', '--at', '2', '--reason', 'INC-7'])
      assert.equal(first.code, 2, first.stderr)
      assert.match(first.stderr, new RegExp(`the chain's end is broken too \\(seq ${rows}, removed.*acknowledge the end first \\(--at ${rows}\\)`))
      const wrong = await ws.warrant(['audit', 'acknowledge', '--at', '3', '--reason', 'INC-7'])
      assert.equal(wrong.code, 2, wrong.stderr)
      const noReason = await ws.warrant(['audit', 'acknowledge', '--at', String(rows)])
      assert.equal(noReason.code, 2, noReason.stderr)
      assert.equal(await ws.withStore(lastSeq), rows - 1, 'nothing was appended by the refusals')

      const endAck = await ws.warrant(['audit', 'acknowledge', '--at', String(rows), '--reason', 'INC-7: rows lost in a restore'])
      assert.equal(endAck.code, 0, endAck.stderr)
      assert.match(endAck.stdout, new RegExp(`break at seq ${rows} \\(removed\\) acknowledged at seq ${rows}`))
      const still = await ws.warrant(['audit', 'verify'])
      assert.equal(still.code, 3, 'the altered row is still reported')
      const rowAck = await ws.warrant(['audit', 'acknowledge', '--at', '2', '--reason', 'INC-7: edited by hand'])
      assert.equal(rowAck.code, 0, rowAck.stderr)
      const last = 2
      const started = await serve(ws.configPath, ws.dir)
      assert.equal(started.listened, true, `${started.stdout}\n${started.stderr}`)

      const after = await ws.warrant(['audit', 'verify'])
      assert.equal(after.code, 6, after.stdout + after.stderr)
      assert.match(after.stdout, /verifies only with 2 acknowledged breaks/)
      assert.match(after.stdout, new RegExp(`acknowledged break at seq ${rows} \\(removed\\).*"INC-7: rows lost in a restore"`))
      assert.match(after.stdout, /acknowledged break at seq 2 \(altered\).*acknowledged at seq \d+ .*"INC-7: edited by hand"/)
      const json = await ws.warrant(['audit', 'verify', '--json'])
      assert.equal(json.code, 6)
      const parsed = JSON.parse(json.stdout) as { ok: boolean; status: string; acknowledged_breaks: { seq: number }[] }
      assert.deepEqual([parsed.ok, parsed.status, parsed.acknowledged_breaks.map((b) => b.seq).sort((a, b) => a - b)], [false, 'ok_with_acknowledged_breaks', [last, rows].sort((a, b) => a - b)])

      const file = join(ws.dir, 'export.ndjson')
      assert.equal((await ws.warrant(['audit', 'export', '-o', file])).code, 0)
      assert.match(readFileSync(file, 'utf8'), /"action":"audit acknowledge"/)
      const offline = await ws.warrant(['audit', 'verify', '--file', file])
      assert.equal(offline.code, 6, offline.stdout + offline.stderr)
      assert.match(offline.stdout, new RegExp(`acknowledged break at seq ${last} \\(altered\\)`))

      // nothing left to acknowledge: refused, exit 3
      const clean = await ws.warrant(['audit', 'acknowledge', '--at', '2', '--reason', 'again'])
      assert.equal(clean.code, 3, clean.stderr)
      assert.match(clean.stderr, /no unacknowledged break/)
    })
  })
}
