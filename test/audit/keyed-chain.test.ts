import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { sql } from 'kysely'
import {
  createAuditLog,
  hashAuditRow,
  parseAuditKeys,
  verifyAuditChain,
  type AuditKeyring,
  type AuditLog,
  type VerifyResult,
} from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import type { AuditEventRow, Store } from '../../src/store/index.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'

const K1 = `k1 ${'a1'.repeat(32)}`
const K2 = `k2 ${'b2'.repeat(32)}`
const K1_OTHER_SECRET = `k1 ${'c3'.repeat(32)}`
const silent = { error: () => undefined }
const agent: Actor = { principal: 'prn_agent', name: 'agent', role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'http' }
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }

async function seed(audit: AuditLog, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await audit.record({ actor: agent, action: 'POST /v1/resources/{resource}/selections', selection_id: `sel_${i}`, summary: { status: 201 } })
    audit.recordCall({ source: 'db', method: 'UPDATE', endpoint: 'subscriptions', targetId: `sub_${i}`, status: 200, outcome: 'written', durationMs: 1, operation_id: `op_${i}` })
  }
  await audit.flush()
}

const rows = (store: Store) => store.db.selectFrom('audit_events').selectAll().orderBy('seq').execute()

function bad(result: VerifyResult, problem: string, context: string): void {
  assert.equal(result.ok, false, `${context}: verify should fail`)
  if (result.status === 'broken') assert.equal(result.problem, problem, `${context}: ${result.message}`)
}

/** Rewrites every row from `from` on, recomputing each hash (with `key`, or plain sha256) and the head. */
async function rewriteChain(store: Store, change: (row: AuditEventRow) => Partial<AuditEventRow>, keyring: AuditKeyring | null): Promise<void> {
  let prev: string | null = null
  for (const row of await rows(store)) {
    const changed: AuditEventRow = { ...row, ...change(row), ...(prev === null ? {} : { prev_hash: prev }) }
    changed.hash = hashAuditRow(changed, keyring?.current ?? null)
    prev = changed.hash
    const { seq, ...rest } = changed
    await store.db.updateTable('audit_events').set(rest).where('seq', '=', seq).execute()
  }
  const last = (await rows(store)).at(-1)!
  await sql`update kv set value = ${JSON.stringify({ seq: last.seq, hash: last.hash })} where key = 'audit_chain_head'`.execute(store.db)
}

for (const kind of STORE_KINDS) {
  describe(`audit chain: canonical form and key (${kind})`, () => {
    test('no input breaks the chain: any string, lone surrogates, NUL, numbers where ids go, odd keys', async () => {
      const ts = await createTestStore(kind)
      try {
        const audit = createAuditLog({ store: ts.store, log: silent })
        const nasty = fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.constantFrom('\uD800', 'a\uDFFFb', '\u0000', 'x\u0000\uD83D', '__proto__', 'constructor', '\uFFFF'),
        )
        await fc.assert(
          fc.asyncProperty(nasty, nasty, fc.oneof(nasty, fc.integer(), fc.constant(0)), async (a, b, id) => {
            const before = await audit.record({
              actor: { ...agent, principal: a, name: b },
              action: `POST ${a}`,
              selection_id: id as string,
              plan_id: b,
              target_id: a,
              summary: { [a]: b, body: { [b]: [a, id], nested: { __proto__: a } } },
              details: { [b]: a },
            })
            assert.ok(before.seq > 0)
          }),
          { numRuns: 60 },
        )
        await audit.flush()
        const result = await audit.verify()
        assert.equal(result.ok, true, result.status !== 'broken' ? '' : result.message)
      } finally {
        await ts.drop()
      }
    })

    test('a denied field keeps its name and never its value; secrets too', async () => {
      const ts = await createTestStore(kind)
      try {
        const audit = createAuditLog({ store: ts.store, log: silent, deniedFields: ['notes'] })
        await audit.record({ actor: agent, action: 'POST /v1/resources/{resource}/search', summary: { status: 400, body: { filter: { notes: 'called the CEO a fraud', status: 'active' } } } })
        const [row] = await rows(ts.store)
        assert.doesNotMatch(row!.summary, /CEO/)
        assert.match(row!.summary, /"notes":"\[redacted\]"/)
        assert.match(row!.summary, /"status":"active"/)
      } finally {
        await ts.drop()
      }
    })

    test('a refused approval attempt is never listed as an approval', async () => {
      const ts = await createTestStore(kind)
      try {
        const audit = createAuditLog({ store: ts.store, log: silent })
        await audit.record({ actor: agent, action: 'POST /v1/plans/{id}/commit', plan_id: 'plan_1', operation_id: 'op_1' })
        // rows as an older gateway wrote them: a decision in details although the answer was a refusal
        await audit.record({ actor: agent, action: 'POST /v1/plans/{id}/approvals', plan_id: 'plan_1', summary: { status: 403, error: 'forbidden' }, details: { decision: 'approve' } })
        await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: 'plan_1', summary: { status: 409, outcome: 'refused', error: 'digest_mismatch' }, details: { decision: 'approve' } })
        await audit.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: 'plan_1', summary: { status: 201, outcome: 'ok' }, details: { decision: 'approve' } })
        const asked = await audit.whoAsked('op_1')
        assert.equal(asked.approvals.length, 1)
        assert.equal(asked.approvals[0]!.principal, 'prn_rev')
      } finally {
        await ts.drop()
      }
    })

    describe('a keyed chain', () => {
      let ts: TestStore
      let audit: AuditLog
      const keyring = parseAuditKeys(K1, 'test')
      const verify = (options: Parameters<typeof verifyAuditChain>[1] = {}) => verifyAuditChain(ts.store.db, { keyring, pageSize: 3, ...options })
      before(async () => {
        ts = await createTestStore(kind)
        audit = createAuditLog({ store: ts.store, log: silent, keyring })
        await seed(audit, 4)
      })
      after(() => ts?.drop())

      /** Snapshot, mutate, check, restore: each case starts from the intact chain. */
      async function tampered(mutate: () => Promise<void>, check: (r: VerifyResult) => void): Promise<void> {
        const saved = await rows(ts.store)
        const head = await ts.store.db.selectFrom('kv').select('value').where('key', '=', 'audit_chain_head').executeTakeFirstOrThrow()
        await mutate()
        try {
          check(await verify())
        } finally {
          await ts.store.db.deleteFrom('audit_events').execute()
          for (const r of saved) await ts.store.db.insertInto('audit_events').values(r).execute()
          await ts.store.db.updateTable('kv').set({ value: head.value }).where('key', '=', 'audit_chain_head').execute()
        }
        assert.equal((await verify()).ok, true)
      }

      test('every row is signed and the intact chain says which guarantee held', async () => {
        const result = await verify()
        assert.equal(result.ok, true)
        if (!result.ok) return
        assert.equal(result.guarantee, 'signed')
        assert.deepEqual(result.key_ids, ['k1'])
        assert.ok((await rows(ts.store)).every((r) => r.hash.startsWith('hmac-sha256:k1:')))
        assert.match(result.statement, /rewrite of the chain by someone without the key/)
      })

      test('altered, removed, reordered and forged rows are detected', async () => {
        await tampered(() => sql`update audit_events set action = 'GET /nothing' where seq = 3`.execute(ts.store.db).then(() => undefined), (r) => bad(r, 'altered', 'altered'))
        await tampered(() => sql`delete from audit_events where seq = 4`.execute(ts.store.db).then(() => undefined), (r) => bad(r, 'removed', 'removed'))
        await tampered(async () => {
          const [a, b] = [(await rows(ts.store))[1]!, (await rows(ts.store))[2]!]
          const { seq: _a, ...ra } = a
          const { seq: _b, ...rb } = b
          await ts.store.db.updateTable('audit_events').set(rb).where('seq', '=', a.seq).execute()
          await ts.store.db.updateTable('audit_events').set(ra).where('seq', '=', b.seq).execute()
        }, (r) => bad(r, 'reordered', 'reordered'))
        // a row appended by someone without the key, with a correct plain hash, and the head moved to it
        await tampered(async () => {
          const last = (await rows(ts.store)).at(-1)!
          const forged = { ...last, seq: last.seq + 1, action: 'POST /v1/plans/{id}/approvals', prev_hash: last.hash }
          forged.hash = hashAuditRow(forged)
          await ts.store.db.insertInto('audit_events').values(forged).execute()
          await sql`update kv set value = ${JSON.stringify({ seq: forged.seq, hash: forged.hash })} where key = 'audit_chain_head'`.execute(ts.store.db)
        }, (r) => bad(r, 'forged', 'forged row'))
        // rows cut from the end and the head moved back, without the key to sign it
        await tampered(async () => {
          const kept = (await rows(ts.store)).at(-3)!
          await sql`delete from audit_events where seq > ${kept.seq}`.execute(ts.store.db)
          await sql`update kv set value = ${JSON.stringify({ seq: kept.seq, hash: kept.hash })} where key = 'audit_chain_head'`.execute(ts.store.db)
        }, (r) => bad(r, 'forged', 'truncated'))
      })

      test('a rewrite of the whole chain without the key is detected', async () => {
        await tampered(() => rewriteChain(ts.store, (r) => (r.seq === 2 ? { summary: '{"status":200}' } : {}), null), (r) => assert.equal(r.ok, false))
        await tampered(() => rewriteChain(ts.store, (r) => (r.seq === 2 ? { summary: '{"status":200}' } : {}), parseAuditKeys(K1_OTHER_SECRET, 'attacker')), (r) => bad(r, 'altered', 'guessed key'))
      })

      test('a signed checkpoint exported earlier catches the end cut back to an older signed head', async () => {
        const checkpoint = await audit.checkpoint(reviewer)
        assert.equal(checkpoint.key_id, 'k1')
        const oldHead = await ts.store.db.selectFrom('kv').select('value').where('key', '=', 'audit_chain_head').executeTakeFirstOrThrow()
        const oldLast = checkpoint.seq
        await seed(audit, 1)
        assert.equal((await verify({ checkpoint })).ok, true)
        // the end cut back to the head as it stood at the checkpoint's seq minus one row, signed head replayed
        await tampered(async () => {
          await sql`delete from audit_events where seq >= ${oldLast}`.execute(ts.store.db)
          const prev = (await rows(ts.store)).at(-1)!
          const { signHead } = await import('../../src/audit/head.js')
          void oldHead
          await sql`update kv set value = ${JSON.stringify(signHead({ seq: prev.seq, hash: prev.hash }, keyring.current))} where key = 'audit_chain_head'`.execute(ts.store.db)
        }, (r) => assert.equal(r.ok, true, 'without a checkpoint, a replayed signed head is indistinguishable'))
        const cut = async () => {
          await sql`delete from audit_events where seq >= ${oldLast}`.execute(ts.store.db)
          const prev = (await rows(ts.store)).at(-1)!
          const { signHead } = await import('../../src/audit/head.js')
          await sql`update kv set value = ${JSON.stringify(signHead({ seq: prev.seq, hash: prev.hash }, keyring.current))} where key = 'audit_chain_head'`.execute(ts.store.db)
        }
        const saved = await rows(ts.store)
        const head = await ts.store.db.selectFrom('kv').select('value').where('key', '=', 'audit_chain_head').executeTakeFirstOrThrow()
        await cut()
        bad(await verify({ checkpoint }), 'removed', 'cut below the checkpoint')
        await ts.store.db.deleteFrom('audit_events').execute()
        for (const r of saved) await ts.store.db.insertInto('audit_events').values(r).execute()
        await ts.store.db.updateTable('kv').set({ value: head.value }).where('key', '=', 'audit_chain_head').execute()
        // a checkpoint forged without the key is refused
        bad(await verify({ checkpoint: { ...checkpoint, seq: checkpoint.seq + 1 } }), 'forged', 'forged checkpoint')
      })

      test('rotation: the new key signs, the retired one still verifies, and each row names its key', async () => {
        const rotated = parseAuditKeys(`${K2}\n${K1}`, 'rotated')
        const next = createAuditLog({ store: ts.store, log: silent, keyring: rotated })
        await seed(next, 1)
        const result = await verifyAuditChain(ts.store.db, { keyring: rotated })
        assert.equal(result.ok, true, result.status !== 'broken' ? '' : result.message)
        if (result.ok) assert.deepEqual(result.key_ids.sort(), ['k1', 'k2'])
        bad(await verifyAuditChain(ts.store.db, { keyring: parseAuditKeys(K2, 'k2 only') }), 'unverifiable', 'retired key missing')
        bad(await verifyAuditChain(ts.store.db, { keyring: null }), 'unverifiable', 'no key at all')
      })
    })

    test('a key configured over an unsigned chain: unsigned until the next append, then partly signed', async () => {
      const ts = await createTestStore(kind)
      try {
        await seed(createAuditLog({ store: ts.store, log: silent }), 2)
        const keyring = parseAuditKeys(K1, 'test')
        bad(await verifyAuditChain(ts.store.db, { keyring }), 'unsigned', 'key set, nothing signed')
        await seed(createAuditLog({ store: ts.store, log: silent, keyring }), 1)
        const result = await verifyAuditChain(ts.store.db, { keyring })
        assert.equal(result.ok, true)
        if (result.ok) {
          assert.equal(result.guarantee, 'partly_signed')
          assert.equal(result.signed_from_seq, 5)
        }
        const unkeyed = await verifyAuditChain(ts.store.db)
        bad(unkeyed, 'unverifiable', 'signed rows need the key')
      } finally {
        await ts.drop()
      }
    })
  })
}
