import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseAuditKeys, verifyAuditExport, type AuditKeyring } from '../../src/audit/index.js'
import { STORE_KINDS } from '../support/stores.js'
import { K1, overwriteHead, unreadableHeads, withChain } from '../support/tampered-chain.js'

/**
 * `warrant audit export` of a store whose chain head was overwritten with something that does not read as one wrote
 * `"head": null`, as for a store with no head; `warrant audit verify --file` then said the head was "missing", where
 * the store's own verify says it is stored but unreadable and quotes it. The export carries the text stored, and its
 * verification names the head unreadable, quoted, never missing, never ok.
 */
for (const kind of STORE_KINDS)
  describe(`an export of a store whose chain head is unreadable (${kind})`, () => {
    for (const keyring of [parseAuditKeys(K1, 'test'), null] as (AuditKeyring | null)[])
      test(`carries the stored text, and verify --file names it unreadable (${keyring ? 'signed' : 'unsigned'} chain)`, () =>
        withChain(kind, keyring, 3, async (ts, audit) => {
          for (const value of unreadableHeads(3)) {
            await overwriteHead(ts.store, value)
            const lines: string[] = []
            for await (const line of audit.exportNdjson()) lines.push(line.slice(0, -1))
            assert.equal(lines.length, 4, lines.join('\n'))
            assert.equal((JSON.parse(lines[3]!) as { head_unreadable?: unknown }).head_unreadable, value, lines[3])
            const { result } = await verifyAuditExport(
              (async function* () {
                yield* lines
              })(),
              'audit.ndjson',
              { keyring },
            )
            assert.equal(result.status, 'broken', JSON.stringify(result))
            if (result.status !== 'broken') return
            assert.equal(result.first_bad_seq, 4)
            assert.match(result.message, /chain head is stored but unreadable/, result.message)
            assert.ok(result.message.includes(JSON.stringify(value)), result.message)
          }
        }),
      )
  })
