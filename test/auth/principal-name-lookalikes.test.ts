import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createPrincipalStore } from '../../src/auth/index.js'
import { STORE_KINDS, type StoreKind, type TestStore, createTestStore } from '../support/stores.js'

async function withPrincipals(kind: StoreKind, body: (principals: ReturnType<typeof createPrincipalStore>, store: TestStore['store']) => Promise<void>): Promise<void> {
  const { store, drop } = await createTestStore(kind)
  try {
    await body(createPrincipalStore(store), store)
  } finally {
    await drop()
  }
}

/**
 * "аlice" (a Cyrillic а) beside "alice" was marked wherever it was shown, but still created: two reviewers that read
 * as one on every surface that does not mark it (a webhook's consumer, a log, an audit export read elsewhere). A name
 * that mixes scripts within a word, or whose look-alike skeleton is an existing principal's, is now refused at
 * creation, naming the character(s); names already stored keep working.
 */
for (const kind of STORE_KINDS) {
  describe(`principal names that pass for another (${kind} store)`, () => {
    test('a word mixing scripts is refused, naming the character; nothing is created', () =>
      withPrincipals(kind, async (principals, store) => {
        for (const [name, char] of [
          ['\u0430lice', /U\+0430/], // Cyrillic а
          ['b\u03BFb', /U\+03BF/], // Greek ο
          ['\uFF41dmin', /U\+FF41/], // fullwidth ａ beside ASCII letters
        ] as const)
          await assert.rejects(principals.issue({ name, role: 'reviewer' }), (e: any) => {
            assert.equal(e.code, 'invalid_request', name)
            assert.match(e.message, char, name)
            assert.match(e.message, /mixes scripts/, name)
            assert.equal(e.details.field, 'name')
            return true
          })
        assert.equal((await store.db.selectFrom('principals').select('id').execute()).length, 0)
        // one script a word is ordinary text: a Russian name, a Greek one, two words in two scripts
        for (const name of ['Иван', 'Ελένη', 'Ivan Иванов', 'Zoë Müller', '李小龍']) assert.equal((await principals.issue({ name, role: 'reviewer' })).name, name)
      }))

    test('a name whose skeleton is an existing principal\'s is refused as taken, naming both; unrelated names pass', () =>
      withPrincipals(kind, async (principals, store) => {
        await principals.issue({ name: 'cope', role: 'reviewer' })
        await principals.issue({ name: 'ALICE', role: 'reviewer' })
        // all-Cyrillic "соре" and "СОРЕ": one script each, yet they read as the Latin "cope"
        for (const name of ['\u0441\u043E\u0440\u0435', '\u0421\u041E\u0420\u0415'])
          await assert.rejects(principals.issue({ name, role: 'reviewer' }), (e: any) => {
            assert.equal(e.code, 'conflict', name)
            assert.match(e.message, /reads as the existing principal "cope"/, name)
            assert.match(e.message, /U\+04(41|21)/, name)
            assert.equal(e.details.existing, 'cope')
            return true
          })
        // fullwidth throughout (no ASCII letter to mix with) folds to "alice", which "ALICE" is in another case
        await assert.rejects(principals.issue({ name: '\uFF41\uFF4C\uFF49\uFF43\uFF45', role: 'reviewer' }), (e: any) => e.code === 'conflict' && /"ALICE"/.test(e.message))
        assert.deepEqual((await store.db.selectFrom('principals').select('name').orderBy('name').execute()).map((r) => r.name), ['ALICE', 'cope'])
        assert.equal((await principals.issue({ name: 'сок', role: 'reviewer' })).name, 'сок', 'a Russian word that reads as no existing name')
      }))

    test('a name wholly in Cherokee or Lisu capitals, drawn as Latin capitals, is refused beside the principal it reads as', () =>
      withPrincipals(kind, async (principals, store) => {
        // Both scripts have capitals drawn exactly as Latin ones (UTS #39 confusables): "ᎠᎪᏙᎬ" and "ꓓꓮꓦꓰ" read "DAVE",
        // "ꓮꓡꓲꓚꓰ" reads "ALICE". One script each, so only the skeleton can tell; it mapped Cyrillic, Greek and Armenian.
        await principals.issue({ name: 'dave', role: 'reviewer' })
        await principals.issue({ name: 'alice', role: 'reviewer' })
        const cherokeeDave = String.fromCodePoint(0x13a0, 0x13aa, 0x13d9, 0x13ac)
        const lisuDave = String.fromCodePoint(0xa4d3, 0xa4ee, 0xa4e6, 0xa4f0)
        const lisuAlice = String.fromCodePoint(0xa4ee, 0xa4e1, 0xa4f2, 0xa4da, 0xa4f0)
        for (const [name, existing] of [[cherokeeDave, 'dave'], [lisuDave, 'dave'], [lisuAlice, 'alice']] as const)
          await assert.rejects(principals.issue({ name, role: 'reviewer' }), (e: any) => {
            assert.equal(e.code, 'conflict', name)
            assert.equal(e.details.existing, existing, name)
            assert.match(e.message, /drawn like Latin letters/, name)
            return true
          })
        assert.deepEqual((await store.db.selectFrom('principals').select('name').orderBy('name').execute()).map((r) => r.name), ['alice', 'dave'])
      }))

    test('a name stored before the check (a mixed-script one) keeps working: a new token, authentication', () =>
      withPrincipals(kind, async (principals, store) => {
        const first = await principals.issue({ name: 'alicex', role: 'reviewer' })
        // as an earlier version stored it
        await store.db.updateTable('principals').set({ name: '\u0430lice' }).where('id', '=', first.principal_id).execute()
        const again = await principals.addToken({ principal: '\u0430lice' })
        assert.equal(again.principal_id, first.principal_id)
        assert.equal((await principals.authenticate(again.token, 'cli')).name, '\u0430lice')
      }))
  })
}
