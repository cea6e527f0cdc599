import assert from 'node:assert/strict'
import { describe } from 'node:test'
import { idRefusedTests } from './support/refused-ids.js'
import { thingsTable } from './support/table-of.js'

/**
 * A PostgreSQL id column of a type with no equality and order a walk can use: box (its `=` and `<` compare areas,
 * two boxes of one area are "equal"), line (no ordering at all), xml (not even `=`), and so on. Every walk failed as the
 * source being unavailable, and every read and write by id with it: never complete, but saying the database was
 * down when it was the column (and a read by a box found the other box of its area). lseg, path, polygon and
 * jsonpath likewise. Refused by its type name, before anything is read, naming the column, the type
 * and the id types that work.
 */
const CASES = [
  { type: 'box', values: [`'(0,0),(1,1)'`, `'(2,2),(3,3)'`], read: ['(1,1),(0,0)'] },
  { type: 'line', values: [`'{1,-1,0}'`, `'{1,-1,1}'`], read: ['{1,-1,0}'] },
  { type: 'lseg', values: [`'[(0,0),(1,1)]'`, `'[(2,2),(4,4)]'`], read: ['[(0,0),(1,1)]'] },
  { type: 'path', values: [`'[(0,0),(1,1)]'`, `'[(2,2),(4,4)]'`], read: ['[(0,0),(1,1)]'] },
  { type: 'polygon', values: [`'((0,0),(1,1),(1,0))'`, `'((2,2),(4,4),(4,2))'`], read: ['((0,0),(1,1),(1,0))'] },
  { type: 'xml', values: [`'<a/>'`, `'<b/>'`], read: ['<a/>'] },
  { type: 'jsonpath', values: [`'$.a'`, `'$.b'`], read: ['$."a"'] },
] as const

for (const { type, values, read } of CASES)
  describe(`sql connector on postgres: an id column of type ${type}`, () => {
    const { engine, connector } = thingsTable('postgres', [`create table things (id ${type}, version int not null, name text)`, `insert into things values ${values.map((v) => `(${v}, 1, 'n')`).join(', ')}`])

    idRefusedTests(connector, new RegExp(`id column "id" of table things is ${type}, which .*text, a number, a uuid or a timestamp`), { read, write: read[0] }, async () => {
      assert.deepEqual(await engine().rows(`select distinct version, name from things`), [{ version: 1, name: 'n' }])
    })
  })
