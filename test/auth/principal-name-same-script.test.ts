import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createPrincipalStore } from '../../src/auth/index.js'
import { createStore } from '../../src/store/index.js'
import { createCliWorkspace } from '../support/cli-config.js'
import { STORE_KINDS, createTestStore } from '../support/stores.js'

/**
 * Principal names compared by `nameSkeleton` only (other scripts' letters drawn as Latin ones, lower case), so a
 * name drawn like another within Latin itself was created: "aIice" (a capital I) beside "alice", "a1ice" beside
 * it, "rnallory" beside "mallory". A reviewer reading "approved by aIice" reads alice. Such a name is now refused as
 * the existing principal's, naming both and the code points where they differ.
 */
const PAIRS: readonly [existing: string, drawnAlike: string, codePoint: RegExp][] = [
  ['alice', 'aIice', /U\+0049/], // capital I for small l
  ['alice', 'AIice', /U\+0049/], // and read with the case rule: "Alice" is alice
  ['alice', 'a1ice', /U\+0031/], // digit one for small l
  ['mallory', 'rnallory', /U\+0072 U\+006E/], // r n for m
  ['lan', 'Ian', /U\+0049/], // a capital I where an existing name has l
  ['bob10', 'bob1O', /U\+004F/], // capital O for zero
]

for (const kind of STORE_KINDS) {
  describe(`principal names drawn alike within one script (${kind} store)`, () => {
    test('a name drawn like an existing principal\'s is refused as conflict naming both; nothing is created', async () => {
      const { store, drop } = await createTestStore(kind)
      try {
        const principals = createPrincipalStore(store)
        for (const name of new Set(PAIRS.map(([existing]) => existing))) await principals.issue({ name, role: 'reviewer' })
        for (const [existing, name, codePoint] of PAIRS)
          await assert.rejects(principals.issue({ name, role: 'reviewer' }), (e: any) => {
            assert.equal(e.code, 'conflict', name)
            assert.equal(e.details.existing, existing, name)
            assert.match(e.message, new RegExp(`"${name}" reads as the existing principal "${existing}"`), name)
            assert.match(e.message, codePoint, `${name}: ${e.message}`)
            return true
          })
        assert.deepEqual((await store.db.selectFrom('principals').select('name').orderBy('name').execute()).map((r) => r.name).sort(), ['alice', 'bob10', 'lan', 'mallory'])
        // ordinary names that differ in a letter read differently and are created: "ian" (dotted) beside "lan", "bob11"
        for (const name of ['ian', 'bob11', 'alicia', 'malory', 'ops-bot', 'Ivan Иванов']) assert.equal((await principals.issue({ name, role: 'reviewer' })).name, name)
      } finally {
        await drop()
      }
    })
  })
}

describe('`warrant token create --name aIice` beside alice (real process)', () => {
  test('exit 3 (refused, as a taken name) naming alice and U+0049; no second principal', { timeout: 180_000 }, async () => {
    const ws = await createCliWorkspace({ count: 5 })
    try {
      const first = await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'alice'])
      assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`)
      const run = await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'aIice'])
      assert.equal(run.code, 3, `${run.stdout}\n${run.stderr}`)
      assert.equal(run.stdout, '', 'no token printed')
      assert.match(run.stderr, /conflict: "aIice" reads as the existing principal "alice"/, run.stderr)
      assert.match(run.stderr, /U\+0049/, run.stderr)
      const store = await createStore({ url: `sqlite:${join(ws.dir, 'warrant.db')}` })
      try {
        assert.deepEqual((await store.db.selectFrom('principals').select('name').execute()).map((r) => r.name), ['alice'])
      } finally {
        await store.close()
      }
    } finally {
      await ws.drop()
    }
  })
})
