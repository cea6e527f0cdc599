import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { CHAIN_HEAD_KEY, assertChainKeyConfigured, createAuditLog, parseAuditKeys, verifyAuditChain, type AuditCheckpoint } from '../../src/audit/index.js'
import type { Actor } from '../../src/contract/index.js'
import type { Store } from '../../src/store/index.js'
import { createCliWorkspace } from '../support/cli-config.js'
import { STORE_KINDS, createTestStore, type TestStore } from '../support/stores.js'

const K1 = `k1 ${'a1'.repeat(32)}`
const K2 = `k2 ${'b2'.repeat(32)}`
const reviewer: Actor = { principal: 'prn_rev', name: 'rev', role: 'reviewer', scopes: { resources: '*', actions: '*' }, surface: 'http' }
const silent = { error: () => undefined }

const rowCount = async (store: Store) => (await store.db.selectFrom('audit_events').select('seq').execute()).length

/** Every signed row cut, and the head removed or replaced by an unsigned one on the last unsigned row: no key needed. */
async function cutToUnsignedStart(store: Store, head: 'removed' | 'unsigned'): Promise<void> {
  await sql`delete from audit_events where hash like 'hmac-sha256:%'`.execute(store.db)
  if (head === 'removed') await store.db.deleteFrom('kv').where('key', '=', CHAIN_HEAD_KEY).execute()
  else {
    const last = await store.db.selectFrom('audit_events').select(['seq', 'hash']).orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()
    await store.db.updateTable('kv').set({ value: JSON.stringify({ seq: Number(last.seq), hash: last.hash }) }).where('key', '=', CHAIN_HEAD_KEY).execute()
  }
}

/** Three rows written before a key was configured, two signed with k1, one with k2 after a rotation (k1 kept). */
async function seed(store: Store): Promise<AuditCheckpoint> {
  const unkeyed = createAuditLog({ store, log: silent })
  for (let i = 0; i < 3; i++) await unkeyed.record({ actor: reviewer, action: 'GET /v1/plans', summary: { i } })
  const first = createAuditLog({ store, keyring: parseAuditKeys(K1, 'k1'), log: silent })
  for (let i = 0; i < 2; i++) await first.record({ actor: reviewer, action: 'POST /v1/plans/{id}/approvals', plan_id: `plan_${i}`, summary: { i } })
  const rotated = createAuditLog({ store, keyring: parseAuditKeys(`${K2}\n${K1}`, 'k2'), log: silent })
  return rotated.checkpoint(reviewer)
}

/**
 * A signed chain cut back to the unsigned rows written before a key was configured (every signed row deleted, the head
 * deleted or pointed at the last unsigned row) verified `unsigned` until the next keyed append, which signed on top:
 * from then on `ok`, `partly_signed`, the cut invisible. Nothing in the store can prove the signed rows existed. The
 * keyring can when it holds a retired key (it signed rows before a rotation): a keyed append and start then refuse.
 * With a single key nothing can tell the cut from a key configured just now; verify's statement says so and names the
 * checkpoint as the guard, and a checkpoint taken before the cut reports it.
 */
for (const kind of STORE_KINDS) {
  describe(`a signed tail cut back to the unsigned start (${kind})`, () => {
    for (const head of ['removed', 'unsigned'] as const) {
      describe(`head ${head}`, () => {
        let ts: TestStore
        let checkpoint: AuditCheckpoint
        before(async () => {
          ts = await createTestStore(kind)
          checkpoint = await seed(ts.store)
          await cutToUnsignedStart(ts.store, head)
        })
        after(() => ts?.drop())

        test('a keyring holding a retired key: the keyed append is refused naming it, nothing is written', async () => {
          const audit = createAuditLog({ store: ts.store, keyring: parseAuditKeys(`${K2}\n${K1}`, 'k2'), log: silent })
          await assert.rejects(audit.record({ actor: reviewer, action: 'GET /v1/audit' }), (error: Error & { code?: string }) => {
            assert.equal(error.code, 'conflict')
            assert.match(error.message, /retired key "k1".*no row of the store's audit chain \(rows 1\.\.3\) is signed/)
            return true
          })
          assert.equal(await rowCount(ts.store), 3)
          await assert.rejects(assertChainKeyConfigured(ts.store.db, parseAuditKeys(`${K2}\n${K1}`, 'k2'), undefined), /retired key "k1".*Refused before anything ran/)
        })

        test('a single key: verify says that such a cut is not seen without a checkpoint, and the checkpoint sees it', async () => {
          const keyring = parseAuditKeys(K2, 'k2 alone')
          await createAuditLog({ store: ts.store, keyring, log: silent }).record({ actor: reviewer, action: 'GET /v1/audit' })
          const result = await verifyAuditChain(ts.store.db, { keyring })
          assert.ok(result.ok && result.guarantee === 'partly_signed' && result.signed_from_seq === 4, JSON.stringify(result))
          assert.match(result.statement, /Signing began at seq 4 \(\d{4}-\d\d-\d\dT[^)]*\).*cut back to the unsigned rows.*only a checkpoint/)
          const against = await verifyAuditChain(ts.store.db, { keyring: parseAuditKeys(`${K2}\n${K1}`, 'k2'), checkpoint })
          assert.ok(!against.ok && against.status === 'broken', JSON.stringify(against))
        })
      })
    }
  })
}

describe('a signed tail cut back to the unsigned start (real processes, sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    // no audit.key: the first rows are written without one, as before a key was configured
    ws = await createCliWorkspace({ count: 3, edit: (raw) => void delete raw.audit })
  })
  after(() => ws?.drop())

  test('a writing command with a rotated key is refused exit 2 naming the retired key; verify with one key says what it cannot see', { timeout: 180_000 }, async () => {
    assert.equal((await ws.warrantWith(['token', 'create', '--role', 'agent', '--name', 'a'], { WARRANT_AUDIT_KEY: undefined })).code, 0)
    const unsigned = await ws.withStore(rowCount)
    assert.equal((await ws.warrantWith(['token', 'create', '--role', 'agent', '--name', 'b'], { WARRANT_AUDIT_KEY: K1 })).code, 0)
    await ws.withStore((store) => cutToUnsignedStart(store, 'removed'))
    assert.equal(await ws.withStore(rowCount), unsigned)

    const refused = await ws.warrantWith(['token', 'create', '--role', 'agent', '--name', 'c'], { WARRANT_AUDIT_KEY: `${K2}\n${K1}` })
    assert.equal(refused.code, 2, refused.stderr)
    assert.match(refused.stderr, /retired key "k1".*no row of the store's audit chain .* is signed/)
    assert.equal(await ws.withStore(rowCount), unsigned, 'nothing was appended')

    assert.equal((await ws.warrantWith(['token', 'create', '--role', 'agent', '--name', 'd'], { WARRANT_AUDIT_KEY: K2 })).code, 0)
    const verify = await ws.warrantWith(['audit', 'verify'], { WARRANT_AUDIT_KEY: K2 })
    assert.equal(verify.code, 0, verify.stdout + verify.stderr)
    assert.match(verify.stdout, /partly_signed[\s\S]*Signing began at seq \d+ .*only a checkpoint kept outside the store/)
  })
})
