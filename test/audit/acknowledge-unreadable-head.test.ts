import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { CHAIN_HEAD_KEY, parseAuditKeys } from '../../src/audit/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { K1, alter, operator, overwriteHead, withChain } from '../support/tampered-chain.js'

/**
 * `warrant audit acknowledge` on a signed chain whose head was overwritten with text that does not read as a head
 * (and an earlier row altered) said the chain's end was broken because "the chain head is missing", and recorded
 * that in the signed acknowledgement, where verify says the head is stored but unreadable. It is worded as verify
 * words it, quoted, in the refusal and in the acknowledgement.
 */
for (const kind of STORE_KINDS)
  describe(`acknowledging the end of a chain whose head is unreadable (${kind})`, () => {
    test('the refusal and the acknowledgement name the head stored but unreadable, never missing', () =>
      withChain(kind, parseAuditKeys(K1, 'test'), 5, async (ts, audit) => {
        await alter(ts.store, 2, '{"i":"forged"}')
        await overwriteHead(ts.store, 'xx')
        await assert.rejects(audit.acknowledge({ at: 2, reason: 'ops', actor: operator }), (error: Error) => {
          assert.match(error.message, /acknowledge the end first \(--at 6\)/, error.message)
          assert.match(error.message, /chain head is stored but unreadable \("xx"/, error.message)
          assert.doesNotMatch(error.message, /missing/, error.message)
          return true
        })
        const acknowledged = await audit.acknowledge({ at: 6, reason: 'ops', actor: operator })
        assert.match(acknowledged.message, /chain head is stored but unreadable \("xx"/, acknowledged.message)
        assert.doesNotMatch(acknowledged.message, /missing/, acknowledged.message)
      }),
    )
  })

/**
 * The signed acknowledgement of an unreadable head recorded the chain's end as found with `head_found: null`, which
 * reads "the head was missing" (so the API describes it): the text stored as the head was lost from the record. It
 * keeps it as `head_unreadable`, quoted as stored, beside `head_found: null`; a missing head keeps none, and verify
 * reads it back so.
 */
for (const kind of STORE_KINDS)
  describe(`the acknowledgement of an unreadable head keeps the head as found (${kind})`, () => {
    for (const [what, value] of [['unreadable', 'xx'], ['missing', null]] as const)
      test(`a head ${what}: head_found null, head_unreadable ${value === null ? 'absent' : 'its text'}`, () =>
        withChain(kind, parseAuditKeys(K1, 'test'), 3, async (ts, audit) => {
          if (value === null) await ts.store.db.deleteFrom('kv').where('key', '=', CHAIN_HEAD_KEY).execute()
          else await overwriteHead(ts.store, value)
          const acknowledged = await audit.acknowledge({ at: 4, reason: 'ops', actor: operator })
          assert.equal(acknowledged.head_found, null)
          assert.equal(acknowledged.head_unreadable, value ?? undefined)
          const verified = await audit.verify()
          assert.equal(verified.status, 'ok_with_acknowledged_breaks', JSON.stringify(verified))
          assert.equal(verified.acknowledged_breaks[0]?.head_unreadable, value ?? undefined)
        }),
      )
  })
