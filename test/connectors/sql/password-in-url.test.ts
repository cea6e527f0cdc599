import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { parseSqlUrl } from '../../../src/connectors/sql/url.js'
import { createStore, parseStoreUrl } from '../../../src/store/index.js'
import { TEST_POSTGRES_ADMIN_URL } from '../../support/stores.js'
import { search } from './support/engine.js'
import { ledgerConnector } from './support/upstream.js'

// A database password reaches a URL two ways the `user:password@` mask did not see: as a query parameter
// (`?password=…`, which libpq and the pg driver honour) and, unencoded, holding "/", "?" or "#" (the URL no
// longer parses, and the refusal quoted it). The first went to the agent in every SOURCE_UNAVAILABLE reason.
const PASSWORD = 'hunter2-Xq9'

/** A database on the real test server that does not exist: the session cannot open, and says why. */
function absentDatabaseUrl(query: string): string {
  const url = new URL(TEST_POSTGRES_ADMIN_URL)
  url.pathname = `/warrant_absent_${randomBytes(4).toString('hex')}`
  return `${url.toString()}${query}`
}

describe('sql: a password in the connection URL never reaches a message', () => {
  it('a ?password= query parameter is masked in the reason an agent reads when the session cannot open (real PostgreSQL)', async () => {
    const connector = ledgerConnector(absentDatabaseUrl(`?sslmode=disable&password=${PASSWORD}`), { id: 'string', status: 'string', version: 'integer' })
    try {
      const envelope = await search(connector, {}, 10)
      assert.equal(envelope.complete, false)
      const message = envelope.incomplete_reasons[0]?.message ?? ''
      // the real failure, so the read really went to the server with that URL
      assert.match(message, /does not exist/)
      assert.match(message, /password=\*\*\*/)
      assert.match(message, /sslmode=disable/, 'other parameters are still shown')
      assert.ok(!JSON.stringify(envelope).includes(PASSWORD), JSON.stringify(envelope.incomplete_reasons))
    } finally {
      await connector.close()
    }
  })

  it('a store URL with ?password= is masked where the store names itself (real PostgreSQL)', async () => {
    await assert.rejects(createStore({ url: absentDatabaseUrl(`?password=${PASSWORD}`) }), (error: Error) => {
      assert.match(error.message, /cannot connect to PostgreSQL store/)
      assert.ok(!error.message.includes(PASSWORD), error.message)
      return true
    })
    assert.ok(!parseStoreUrl(`postgres://app@db.internal:5432/warrant?password=${PASSWORD}`).display.includes(PASSWORD))
  })

  it('a password holding an unencoded "/", "?", "#" or "@" is masked in the refusal of the URL', () => {
    for (const password of [`${PASSWORD}/x`, `${PASSWORD}?x`, `${PASSWORD}#x`, `12/${PASSWORD}`, `${PASSWORD}@x/y`]) {
      for (const scheme of ['postgres', 'mysql']) {
        const url = `${scheme}://app:${password}@db.internal:5432/warrant`
        let shown: string
        try {
          shown = parseSqlUrl(url).display
        } catch (error) {
          shown = (error as Error).message
        }
        assert.ok(!shown.includes(PASSWORD), `sql connector, ${url}: ${shown}`)
        assert.match(shown, new RegExp(`^(sql connector URL ")?${scheme}://app:\\*\\*\\*@`), shown)
      }
      let stored: string
      try {
        stored = parseStoreUrl(`postgres://app:${password}@db.internal:5432/warrant`).display
      } catch (error) {
        stored = (error as Error).message
      }
      assert.ok(!stored.includes(PASSWORD), `store: ${stored}`)
    }
  })

  it('a URL without a password is shown as written', () => {
    assert.equal(parseSqlUrl('postgres://app@db.internal:5432/warrant?application_name=a@b').display, 'postgres://app@db.internal:5432/warrant?application_name=a@b')
    assert.equal(parseSqlUrl('mysql://app:pw@db.internal:3306/shop').display, 'mysql://app:***@db.internal:3306/shop')
  })
})
