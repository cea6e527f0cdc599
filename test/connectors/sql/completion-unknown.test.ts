import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import pg from 'pg'
import { classifyWriteError } from '../../../src/connectors/sql/errors.js'
import { TEST_POSTGRES_ADMIN_URL } from '../../support/stores.js'
import { errorOf } from './support/error-of.js'

/**
 * SQLSTATE class 40 is "transaction rollback", and the classifier took the whole class as "certainly not applied",
 * retried. One code of it says the opposite: 40003 "statement completion unknown" (what a server or a pooler answers
 * when it lost track of a statement it had been given). A write answered so may have been applied: `unknown`, never
 * sent again. The error is the pg driver's answer to a real server raising that code. (MariaDB and MySQL raise it only from a
 * SIGNAL, a trigger's own refusal: `rejected`, as every SIGNAL is.)
 */
describe('classifyWriteError: SQLSTATE 40003 (statement completion unknown) is unknown, not rolled back', () => {
  it('postgres', async () => {
    const client = new pg.Client({ connectionString: TEST_POSTGRES_ADMIN_URL })
    await client.connect()
    try {
      const error = await errorOf(() => client.query(`do $$ begin raise exception 'completion unknown' using errcode = '40003'; end $$`))
      assert.equal((error as { code?: string }).code, '40003')
      assert.equal(classifyWriteError(error).kind, 'unknown', JSON.stringify(classifyWriteError(error)))
      // the rest of the class still says rolled back: a serialization failure is sent again after a wait
      const serialization = await errorOf(() => client.query(`do $$ begin raise exception 'could not serialize' using errcode = '40001'; end $$`))
      assert.equal(classifyWriteError(serialization).kind, 'rate_limited')
      assert.match(classifyWriteError(serialization).message, /rolled back/)
    } finally {
      await client.end()
    }
  })
})
