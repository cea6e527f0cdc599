import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createEngine, search, type Engine } from './support/engine.js'

/**
 * A unique index that proves the id unique under another comparison than the column's own: the column folds case
 * (SQLite COLLATE NOCASE, a PostgreSQL non-deterministic ICU collation) and the index is on `id COLLATE BINARY` /
 * `"C"`, so "a" and "A" are both stored, and unique. The walk took the id as proven unique, checked nothing, and
 * paged `ORDER BY id … WHERE id > last` in the column's comparison, where "A" is not after "a": a page ending on
 * "a" skipped "A", the walk complete. The walk must order and resume in the comparison the index proves unique.
 */
const FIELDS = { id: 'string', status: 'string', version: 'integer' }
const IDS = ['A', 'B', 'a', 'b', 'c']

describe('sql on sqlite: an id unique under BINARY in a NOCASE column', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('sqlite')
    await engine.exec('create table mixed (id text collate nocase, status text, version integer not null)')
    await engine.exec('create unique index mixed_id on mixed (id collate binary)')
    await engine.exec("insert into mixed values ('a', 'active', 1), ('A', 'active', 1), ('b', 'active', 1), ('B', 'active', 1), ('c', 'active', 1)")
  })
  after(() => engine?.drop())

  for (const pageSize of [1, 2, 100])
    it(`a walk in pages of ${pageSize} returns every id once, complete`, async () => {
      const envelope = await search(engine.connector('mixed', FIELDS), {}, pageSize)
      assert.deepEqual(envelope.items.map((i) => i.id).sort(), IDS, JSON.stringify(envelope.incomplete_reasons))
      assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
    })
})

describe('sql on postgres: an id unique under "C" in a case-insensitive column', () => {
  let engine: Engine
  before(async () => {
    engine = await createEngine('postgres')
    await engine.exec("create collation folded (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
    await engine.exec('create table mixed (id text collate folded, status text, version integer not null)')
    await engine.exec('create unique index mixed_id on mixed (id collate "C")')
    await engine.exec("insert into mixed values ('a', 'active', 1), ('A', 'active', 1), ('b', 'active', 1), ('B', 'active', 1), ('c', 'active', 1)")
  })
  after(() => engine?.drop())

  it('a walk resumed page by page in new sessions returns every id once', async () => {
    const connector = engine.connector('mixed', FIELDS)
    const ids: string[] = []
    let position: string | null = null
    for (let page = 0; page < 10; page++) {
      // each page in a session of its own: a walk resumed from its cursor in a later call
      const session = await connector.openSession()
      try {
        const result = await session.readPage({ source: 'things-db', filter: {}, position, pageSize: 1 })
        assert.equal(result.kind, 'page', JSON.stringify(result))
        if (result.kind !== 'page') break
        ids.push(...result.items.map((i) => i.id))
        position = result.next
      } finally {
        await session.close()
      }
      if (position === null) break
    }
    assert.deepEqual(ids.sort(), IDS)
  })

  it('a walk in pages of 1 returns every id once, complete', async () => {
    const envelope = await search(engine.connector('mixed', FIELDS), {}, 1)
    assert.deepEqual(envelope.items.map((i) => i.id).sort(), IDS, JSON.stringify(envelope.incomplete_reasons))
    assert.equal(envelope.complete, true, JSON.stringify(envelope.incomplete_reasons))
  })
})
