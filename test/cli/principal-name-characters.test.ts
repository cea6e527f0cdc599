import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createPrincipalStore } from '../../src/auth/index.js'
import { createStore } from '../../src/store/index.js'
import { createCliWorkspace } from '../support/cli-config.js'
import { createTestStore } from '../support/stores.js'

/** Names that read as something they are not: a second line, a colour, text reversed, a gap no one sees. */
const BAD_NAMES: readonly [string, string, RegExp][] = [
  ['newline', 'alice\ntok_00000000  admin  principal=root', /U\+000A/],
  ['ANSI escape', 'bob\u001b[2K\rroot', /U\+001B/],
  ['bidi override', 'ad\u202Enimda', /U\+202E/],
  ['zero-width space', 'ali\u200Bce', /U\+200B/],
  ['tab', 'carol\tadmin', /U\+0009/],
  ['C1 control', 'dave\u009Bx', /U\+009B/],
  ['line separator', 'eve\u2028root', /U\+2028/],
]

/**
 * `warrant token create --name` took newlines, ANSI escapes and bidi overrides into a principal's name: escaped where
 * the CLI shows it, but stored as given, so every other reader (the review page, an audit export, a webhook's
 * consumer, a log) showed a reviewer that read as another. Such a name is now refused at creation, exit 2 naming
 * the character, and nothing is created.
 */
describe('principal names with control or invisible format characters', () => {
  test('the principal store refuses them (invalid_request naming the character), creating nothing', async () => {
    const ts = await createTestStore('sqlite')
    try {
      const principals = createPrincipalStore(ts.store)
      for (const [what, name, char] of BAD_NAMES)
        await assert.rejects(principals.issue({ name, role: 'reviewer' }), (error: Error & { code?: string }) => {
          assert.equal(error.code, 'invalid_request', what)
          assert.match(error.message, char, what)
          assert.match(error.message, /control or invisible/, what)
          return true
        })
      assert.equal((await ts.store.db.selectFrom('principals').select('id').execute()).length, 0)
      assert.equal((await ts.store.db.selectFrom('tokens').select('id').execute()).length, 0)
      // ordinary names, accents and scripts included, still work
      for (const name of ['alice', 'Zoë Müller', '李小龍', 'ci-agent (prod)']) assert.equal((await principals.issue({ name, role: 'reviewer' })).name, name)
    } finally {
      await ts.drop()
    }
  })

  test('`warrant token create --name` refuses them (and a word mixing scripts): exit 2, the character named, no principal or token created (real process)', { timeout: 180_000 }, async () => {
    const ws = await createCliWorkspace({ count: 5 })
    try {
      for (const [what, name, char] of BAD_NAMES.slice(0, 3)) {
        const run = await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', name])
        assert.equal(run.code, 2, `${what}: exit ${run.code}\n${run.stdout}\n${run.stderr}`)
        assert.equal(run.stdout, '', `${what}: no token printed`)
        assert.match(run.stderr, /invalid_request: .*control or invisible/, what)
        assert.match(run.stderr, char, what)
      }
      // a word mixing scripts ("аlice", a Cyrillic "а") passes for another name: refused the same way
      const mixed = await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', '\u0430lice'])
      assert.equal(mixed.code, 2, `${mixed.stdout}\n${mixed.stderr}`)
      assert.match(mixed.stderr, /invalid_request: .*mixes scripts.*U\+0430/)
      const store = await createStore({ url: `sqlite:${join(ws.dir, 'warrant.db')}` })
      try {
        assert.deepEqual(await store.db.selectFrom('principals').select('name').execute(), [])
        assert.deepEqual(await store.db.selectFrom('tokens').select('id').execute(), [])
      } finally {
        await store.close()
      }
    } finally {
      await ws.drop()
    }
  })
})
