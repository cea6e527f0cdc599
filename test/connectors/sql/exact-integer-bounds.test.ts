import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * MySQL/MariaDB integer columns were judged from the signed type's least to the unsigned type's greatest whatever the
 * column was (the catalogue's data_type does not say UNSIGNED): -1 into an INT UNSIGNED, or 200 into a TINYINT(1), was
 * proposed and sent, and refused at the database (STRICT) instead of before any statement; a DECIMAL UNSIGNED took a
 * negative number likewise. The bounds are now the column's own (`column_type`). And a JSON number past 2^53 - 1 is
 * the reading of several integers (9007199254740993 reads as 9007199254740992): written into a BIGINT (or a bare
 * numeric) it was some other integer than the one meant, unnoticed. Such a number is now refused, saying why.
 */
const CASES: Record<'mysql' | 'postgres', { create: string; refused: readonly (readonly [string, number, RegExp])[]; kept: Record<string, number> }> = {
  mysql: {
    create: 'create table amounts (id varchar(10) primary key, version integer not null, u int unsigned, t tinyint(1), b bigint unsigned, s bigint, d decimal(5,2) unsigned)',
    refused: [
      ['u', -1, /keeps only integers from 0 to 4294967295/],
      ['u', 4294967296, /keeps only integers from 0 to 4294967295/],
      ['t', 128, /keeps only integers from -128 to 127/],
      ['d', -1.5, /keeps only numbers from 0 with at most 2 digit\(s\) after the point/],
      ['b', 18446744073709551615, /keeps only integers from 0 to 18446744073709551615/],
      ['b', 9007199254740993, /9007199254740992 .*past 2\^53 - 1 .*several integers/],
      ['s', -9007199254740993, /-9007199254740992 .*past 2\^53 - 1 .*several integers/],
    ],
    kept: { u: 4294967295, t: -128, b: 9007199254740991, s: -9007199254740991, d: 999.99 },
  },
  postgres: {
    create: 'create table amounts (id varchar(10) primary key, version integer not null, s bigint, n numeric)',
    refused: [
      ['s', 9007199254740993, /9007199254740992 .*past 2\^53 - 1 .*several integers/],
      ['n', 1e20, /100000000000000000000 .*past 2\^53 - 1 .*several integers/],
    ],
    kept: { s: 9007199254740991, n: 0.125 },
  },
}

for (const kind of ['mysql', 'postgres'] as const satisfies readonly Kind[]) {
  describe(`sql on ${kind}: a number is judged by the integer column's exact bounds, and one past 2^53 - 1 is refused`, () => {
    let engine: Engine
    let connector: SqlConnector
    const { create, refused, kept } = CASES[kind]
    before(async () => {
      engine = await createEngine(kind)
      await engine.exec(create)
      await engine.exec("insert into amounts (id, version) values ('a', 1)")
      connector = engine.connector('amounts', { id: 'string', version: 'integer', ...Object.fromEntries(Object.keys(kept).map((f) => [f, 'number'])) })
    })
    after(async () => void (await engine?.drop()))

    for (const [field, value, why] of refused) {
      it(`${field} = ${value}: refused before anything is sent`, async () => {
        await assert.rejects(connector.write({ id: 'a', expectedVersion: '1', set: { [field]: value }, precondition: {} }), (error: any) => {
          assert.equal(error.code, 'invalid_request', error.message)
          assert.match(error.message, new RegExp(`sets "${field}" to `))
          assert.match(error.message, why)
          assert.match(error.message, /nothing was written/)
          return true
        })
        assert.deepEqual((await engine.rows("select version from amounts where id = 'a'")).map((r) => Number(r.version)), [1])
      })
    }

    it('the bounds themselves are written', async () => {
      const written = await connector.write({ id: 'a', expectedVersion: '1', set: kept, precondition: {} })
      assert.equal(written.kind, 'written', JSON.stringify(written))
      const text = (f: string) => (kind === 'mysql' ? `cast(${f} as char) as ${f}` : `${f}::text as ${f}`)
      const [row] = await engine.rows(`select ${Object.keys(kept).map(text).join(', ')} from amounts where id = 'a'`)
      assert.deepEqual(Object.fromEntries(Object.entries(row!).map(([f, v]) => [f, Number(v)])), kept, 'each bound is stored as set')
    })
  })
}
