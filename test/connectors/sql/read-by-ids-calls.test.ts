import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { UpstreamCall } from '../../../src/connectors/index.js'
import { createEngine, type Engine, type Kind } from './support/engine.js'

/**
 * A by-id read whose ids the engine matches to a row stored otherwise ("abc" finding "ABC" in a case-folding column)
 * asks the database again: the ids left together, then each alone. Those statements reached the upstream without a
 * call: the audit log, which holds every upstream call, showed one SELECT where the database ran three.
 */
const FIELDS = { id: 'string', status: 'string', version: 'integer' }
const TABLE: Record<Kind, string[]> = {
  sqlite: ['create table folded (id text collate nocase primary key, status text, version integer not null)'],
  postgres: ['create extension if not exists citext', 'create table folded (id citext primary key, status text, version integer not null)'],
  mysql: ['create table folded (id varchar(20) collate utf8mb4_general_ci primary key, status varchar(20), version integer not null) engine=InnoDB'],
}

for (const kind of ['sqlite', 'postgres', 'mysql'] as Kind[])
describe(`sql on ${kind}: every statement of a by-id read is a call (a case-folding id column)`, () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine(kind)
    for (const statement of TABLE[kind]) await engine.exec(statement)
    await engine.exec("insert into folded values ('ABC', 'active', 1), ('XYZ', 'active', 1)")
  })
  after(() => engine?.drop())

  // the catalogue facts a by-id read is judged by are read first, each statement a call of its own (the order of the
  // two read side by side is not fixed)
  const CATALOGUE = ['catalogue: columns of table folded', 'catalogue: table facts of table folded', 'catalogue: update triggers of table folded']
  const catalogueFirst = (calls: readonly UpstreamCall[]) => {
    assert.deepEqual(calls.slice(0, 3).map((c) => [c.endpoint, c.method, c.outcome]).sort(), CATALOGUE.map((e) => [e, 'SELECT', 'ok']))
    return calls.slice(3)
  }

  it('an id spelled otherwise: the chunk and the id read alone are two calls', async () => {
    const calls: UpstreamCall[] = []
    const connector = engine.connector('folded', FIELDS, {}, { onCall: (call) => calls.push(call) })
    const read = await connector.readByIds(['abc'])
    assert.deepEqual(read.failed.map((f) => f.id), ['abc'])
    assert.deepEqual(
      catalogueFirst(calls).map((c) => [c.method, c.targetId ?? null]),
      [
        ['SELECT', 'abc'],
        ['SELECT', 'abc'],
      ],
    )
  })

  it('an id asked in two spellings: the chunk, the ids left asked again, and each alone are calls', async () => {
    const calls: UpstreamCall[] = []
    const connector = engine.connector('folded', FIELDS, {}, { onCall: (call) => calls.push(call) })
    const read = await connector.readByIds(['ABC', 'abc'])
    assert.deepEqual([...read.records.keys()], ['ABC'])
    assert.deepEqual(read.failed.map((f) => f.id), ['abc'])
    assert.deepEqual(
      catalogueFirst(calls).map((c) => [c.method, c.outcome, c.targetId ?? null]),
      [
        ['SELECT', 'ok', null],
        ['SELECT', 'ok', 'abc'],
        ['SELECT', 'ok', 'abc'],
      ],
    )
  })
})
