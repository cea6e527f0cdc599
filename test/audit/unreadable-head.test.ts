import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { assertChainKeyConfigured, createAuditLog, parseAuditKeys, verifyAuditChain, type AuditKeyring } from '../../src/audit/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { K1, operator, overwriteHead, silent, unreadableHeads, withChain } from '../support/tampered-chain.js'

/**
 * A chain head overwritten with something that does not read as one (not JSON, a seq written as text) was read as no
 * head: verify said "the chain head is missing", which sent an operator looking for a deleted row that is there; and
 * with every row deleted too, it answered `ok`, "the log is empty", though a head stored says rows were written. A
 * head stored but unreadable is said as such, quoted, and never verifies.
 */
for (const kind of STORE_KINDS)
  describe(`an unreadable chain head (${kind})`, () => {
    for (const keyring of [parseAuditKeys(K1, 'test'), null] as (AuditKeyring | null)[])
      test(`is named unreadable, never missing, never ok (${keyring ? 'signed' : 'unsigned'} chain)`, () =>
        withChain(kind, keyring, 4, async (ts) => {
          for (const value of unreadableHeads(4)) {
            await overwriteHead(ts.store, value)
            const result = await verifyAuditChain(ts.store.db, { keyring })
            assert.equal(result.status, 'broken', value)
            if (result.status !== 'broken') return
            assert.equal(result.first_bad_seq, 5)
            assert.match(result.message, /chain head is stored but unreadable/, result.message)
            assert.ok(result.message.includes(JSON.stringify(value)), result.message)
          }
          await ts.store.db.deleteFrom('audit_events').execute()
          const wiped = await verifyAuditChain(ts.store.db, { keyring })
          assert.equal(wiped.ok, false, `a wiped log under an unreadable head: ${JSON.stringify(wiped)}`)
          if (wiped.status === 'broken') assert.match(wiped.message, /stored but unreadable.*the log is empty/)
        }),
      )
  })

/**
 * Over a signed chain, an append and every start that writes refused an unreadable head as "its head is missing" (the
 * refusal read the head parsed, and an unreadable one parses to none), though verify, export and acknowledge name it
 * stored but unreadable, quoted. The refusal words it as verify does, and its details say `head: 'unreadable'`.
 */
for (const kind of STORE_KINDS)
  test(`an append and a start over a signed chain refuse an unreadable head as unreadable, never missing (${kind})`, () => {
    const keyring = parseAuditKeys(K1, 'test')
    return withChain(kind, keyring, 3, async (ts) => {
      await overwriteHead(ts.store, 'xx')
      await assert.rejects(createAuditLog({ store: ts.store, log: silent, keyring }).record({ actor: operator, action: 'GET /v1/audit' }), (error: Error & { code?: string; details?: Record<string, unknown> }) => {
        assert.equal(error.code, 'conflict')
        assert.match(error.message, /its head is stored but unreadable \("xx" is not a seq and hash/, error.message)
        assert.doesNotMatch(error.message, /missing/)
        assert.equal(error.details?.head, 'unreadable')
        return true
      })
      await assert.rejects(assertChainKeyConfigured(ts.store.db, keyring, undefined), (error: Error & { details?: Record<string, unknown> }) => {
        assert.match(error.message, /its head is stored but unreadable \("xx"/, error.message)
        assert.doesNotMatch(error.message, /missing/)
        assert.equal(error.details?.head, 'unreadable')
        return true
      })
    })
  })

/**
 * The refusal over a signed chain whose head is missing, unreadable or unsigned told the operator to run
 * `warrant audit acknowledge --at SEQ`, a literal SEQ: the operator had to find the seq from verify. It names the seq
 * acknowledge takes for that end (the row after the last one where the head no longer vouches for it), and acknowledge
 * accepts it.
 */
for (const kind of STORE_KINDS)
  test(`the refusal over a headless signed chain names the seq to acknowledge, never a literal SEQ (${kind})`, () => {
    const keyring = parseAuditKeys(K1, 'test')
    return withChain(kind, keyring, 3, async (ts, audit) => {
      await overwriteHead(ts.store, 'xx')
      let message = ''
      await assert.rejects(audit.record({ actor: operator, action: 'GET /v1/audit' }), (error: Error) => ((message = error.message), true))
      assert.doesNotMatch(message, /--at SEQ/, message)
      assert.match(message, /warrant audit acknowledge --at 4 --reason/, message)
      await audit.acknowledge({ at: 4, reason: 'ops', actor: operator })
    })
  })

for (const kind of STORE_KINDS)
  test(`the refusal over a signed chain whose head was replaced unsigned names the seq to acknowledge (${kind})`, () => {
    const keyring = parseAuditKeys(K1, 'test')
    return withChain(kind, keyring, 3, async (ts, audit) => {
      const last = await ts.store.db.selectFrom('audit_events').select(['seq', 'hash']).where('seq', '=', 3).executeTakeFirstOrThrow()
      await overwriteHead(ts.store, JSON.stringify({ seq: 3, hash: last.hash }))
      let message = ''
      await assert.rejects(audit.record({ actor: operator, action: 'GET /v1/audit' }), (error: Error) => ((message = error.message), true))
      assert.match(message, /its head is not signed.*warrant audit acknowledge --at 3 --reason/, message)
      await audit.acknowledge({ at: 3, reason: 'ops', actor: operator })
    })
  })
