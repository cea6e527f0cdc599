import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseAuditKeys } from '../../src/audit/index.js'
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
