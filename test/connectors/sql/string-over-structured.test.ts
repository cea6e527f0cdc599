import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decide } from '../../../src/contract/index.js'
import { createEngine, search, type Engine, type Kind } from './support/engine.js'

/**
 * A `string` field over a column the driver reads as something else than text: bytes (PostgreSQL bytea, MySQL
 * BINARY, VARBINARY, BLOB), a parsed value (PostgreSQL json, jsonb, interval, an array), a MySQL BIT read as the
 * number its bits spell. A record shows it as JSON of what the driver built ('{"type":"Buffer","data":[0,255]}',
 * '{"days":1}', "[1,2]", "10"); the database compares its own text or bytes. `eq` on the value a record shows found
 * nothing, answered complete: a false proof of absence. A filter on it is refused, naming the column and the fix.
 */
const CASES: [Kind, string, string][] = [
  ['postgres', 'bytea', "'\\x00ff'"],
  ['postgres', 'jsonb', `'{"a": 1}'`],
  ['postgres', 'json', `'{"a":  1}'`],
  ['postgres', 'interval', "'1 day'"],
  ['postgres', 'integer[]', "'{1,2}'"],
  ['mysql', 'varbinary(4)', "'ab'"],
  ['mysql', 'binary(4)', "'ab'"],
  ['mysql', 'blob', "'ab'"],
  ['mysql', 'bit(4)', "b'1010'"],
  // MariaDB's JSON is LONGTEXT compared as stored text; mysql2 parsed and re-spelled it ('{"a":1}'), a text no row holds
  ['mysql', 'json', `'{"a":  1}'`],
]

for (const kind of ['postgres', 'mysql'] as const)
  describe(`sql on ${kind}: a string field over a column not read as text`, () => {
    let engine: Engine
    const cases = CASES.filter(([k]) => k === kind)
    before(async () => {
      engine = await createEngine(kind)
      for (const [, type, value] of cases) {
        const table = `t_${type.replace(/\W/g, '_')}`
        await engine.exec(`create table ${table} (id varchar(10) primary key, version integer not null, v ${type})`)
        await engine.exec(`insert into ${table} values ('a', 1, ${value})`)
      }
    })
    after(() => engine?.drop())

    for (const [, type] of cases)
      it(`${type}: an eq filter on the value a record shows finds it, or says it cannot be trusted`, async () => {
        const connector = engine.connector(`t_${type.replace(/\W/g, '_')}`, { id: 'string', version: 'integer', v: 'string' })
        const shown = (await search(connector, {}, 10)).items[0]!.fields.v as string
        const envelope = await search(connector, { v: shown }, 10)
        if (envelope.items.length === 1) return
        assert.equal(envelope.complete, false, `${JSON.stringify(shown)}: no record, complete`)
        assert.notEqual(decide(envelope, 'prove_absence').decision, 'proceed')
        assert.match(JSON.stringify(envelope.incomplete_reasons), /field \\?"v\\?" is declared string, but column \\?"v\\?".*(declare it (tags|one of number, integer or boolean), or change the column|no declared type reads a .* column as the database compares it: filters on it are refused)/)
      })

    if (kind === 'mysql')
      it('json (LONGTEXT on MariaDB): a record shows the text as stored, and an eq on it finds its row', async () => {
        const connector = engine.connector('t_json', { id: 'string', version: 'integer', v: 'string' })
        assert.equal((await search(connector, {}, 10)).items[0]!.fields.v, '{"a":  1}')
        const envelope = await search(connector, { v: '{"a":  1}' }, 10)
        assert.deepEqual([envelope.items.length, envelope.complete], [1, true])
      })
  })
