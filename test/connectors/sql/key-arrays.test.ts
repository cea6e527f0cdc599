import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { FieldType } from '../../../src/config/index.js'
import type { WriteOutcome } from '../../../src/connectors/index.js'
import type { SqlConnector } from '../../../src/connectors/sql/index.js'
import { createUpstream, ledgerConnector, type Upstream } from './support/upstream.js'

/**
 * On PostgreSQL a window's ids and versions go as one array parameter each where the id column's `=` against the
 * array's elements is the comparison the per-target pieces made (key-arrays.ts): the window's UPDATE and the read
 * by ids then have the same text for any number of targets. Each target is still judged on its own row: a stale
 * version, a missing id, an id spelled otherwise than its row ("007" of the integer 7), an id longer than a
 * varchar(n) holds. Where the column's `=` is not code-point equality (char(n), a case-insensitive collation), or
 * its type is another (uuid), the per-target pieces stay, and the answers are the same kinds.
 *
 * The text of each UPDATE is what a BEFORE UPDATE trigger sees as `current_query()`.
 */
interface Case {
  readonly column: string
  readonly idType: FieldType
  /** ids stored, each at version 1 */
  readonly stored: readonly string[]
  /** a window: id and expected version; and the outcome kind each must get */
  readonly windows: readonly (readonly [id: string, version: string, kind: WriteOutcome['kind'] | 'missing'])[][]
  /** the statement is the array form */
  readonly arrays: boolean
}

const CASES: readonly Case[] = [
  {
    column: 'text',
    idType: 'string',
    stored: ['a', 'b', 'c', 'd', 'e', 'A'],
    windows: [
      [['a', '1', 'written'], ['b', '1', 'written'], ['x', '1', 'missing']],
      [['c', '1', 'written'], ['d', '2', 'conflict'], ['e', '1', 'written'], ['A', '1', 'written'], ['a', '2', 'written']],
    ],
    arrays: true,
  },
  {
    column: 'varchar(3)',
    idType: 'string',
    stored: ['abc', 'abd', 'abe'],
    windows: [
      [['abc', '1', 'written'], ['abcd', '1', 'missing']],
      [['abd', '1', 'written'], ['abe', '1', 'written'], ['abdX', '1', 'missing'], ['abc', '1', 'conflict']],
    ],
    arrays: true,
  },
  {
    column: 'integer',
    idType: 'integer',
    stored: ['1', '2', '3', '7', '8'],
    windows: [
      [['1', '1', 'written'], ['2', '1', 'written'], ['9', '1', 'missing']],
      [['3', '1', 'written'], ['8', '1', 'written'], ['2', '1', 'conflict'], ['7', '1', 'written']],
    ],
    arrays: true,
  },
  {
    column: 'bigint',
    idType: 'integer',
    stored: ['9007199254740993', '-5', '0'],
    windows: [
      [['9007199254740993', '1', 'written'], ['-5', '1', 'written']],
      [['0', '1', 'written'], ['-5', '1', 'conflict'], ['9007199254740993', '2', 'written']],
    ],
    arrays: true,
  },
  {
    // the per-target pieces: "007" names no record (compared as the text a record shows), 7 is written
    column: 'integer',
    idType: 'integer',
    stored: ['7', '8'],
    windows: [[['007', '1', 'conflict'], ['8', '1', 'written']]],
    arrays: false,
  },
  {
    column: 'char(4)',
    idType: 'string',
    stored: ['ab', 'cd', 'ef'],
    windows: [[['ab', '1', 'written'], ['ab  ', '1', 'conflict'], ['cd', '1', 'written']]],
    arrays: false,
  },
  {
    column: 'text collate ci',
    idType: 'string',
    stored: ['ab', 'cd'],
    windows: [[['AB', '1', 'conflict'], ['cd', '1', 'written']]],
    arrays: false,
  },
  {
    column: 'uuid',
    idType: 'string',
    stored: ['6f1c1d1e-0000-4000-8000-000000000001', '6f1c1d1e-0000-4000-8000-000000000002'],
    windows: [[['6f1c1d1e-0000-4000-8000-000000000001', '1', 'written'], ['6f1c1d1e-0000-4000-8000-000000000002', '1', 'written']]],
    arrays: false,
  },
]

describe('sql on postgres: a window\'s ids and versions as array parameters', () => {
  let upstream: Upstream
  before(async () => {
    upstream = await createUpstream('postgres')
    await upstream.exec("create collation ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
    await upstream.exec('create table seen (n serial primary key, query text not null)')
    await upstream.exec(`create function remember() returns trigger language plpgsql as $$ begin insert into seen (query) values (current_query()); return new; end $$`)
  })
  after(async () => {
    await upstream?.drop()
  })

  for (const [n, c] of CASES.entries()) {
    it(`an id column of ${c.column}${c.arrays ? '' : ' keeps the per-target pieces'}: each target gets its own answer`, async () => {
      await upstream.exec('drop table if exists ledger')
      await upstream.exec('delete from seen')
      await upstream.exec(`create table ledger (id ${c.column} primary key, version integer not null, label text not null)`)
      await upstream.exec('create trigger remember before update on ledger for each row execute function remember()')
      for (const id of c.stored) await upstream.exec("insert into ledger (id, version, label) values (?, 1, 'open')", [id])
      const connector: SqlConnector = ledgerConnector(upstream.url, { id: c.idType, version: 'integer', label: 'string' })
      try {
        for (const [w, window] of c.windows.entries()) {
          const outcomes = await connector.writeWindow!(window.map(([id, version]) => ({ id, expectedVersion: version, set: { label: `w${n}.${w}` }, precondition: {} })))
          for (const [i, [id, , kind]] of window.entries()) {
            const outcome = outcomes[i]!
            if (kind === 'missing') assert.deepEqual([outcome.kind, outcome.kind === 'conflict' && outcome.reason], ['conflict', 'missing'], `${id}: ${JSON.stringify(outcome)}`)
            else assert.equal(outcome.kind, kind, `${id}: ${JSON.stringify(outcome)}`)
            if (outcome.kind === 'written') assert.deepEqual([outcome.record?.id, outcome.record?.fields.label], [id, `w${n}.${w}`])
          }
        }
      } finally {
        await connector.close()
      }
      // every window's UPDATE, whatever its number of targets, had one text: the array form, or the pieces
      const queries = await seenQueries(upstream)
      const updates = [...new Set(queries.filter((q) => /^update "ledger"/.test(q)))]
      if (c.arrays) {
        assert.equal(updates.length, 1, updates.join('\n'))
        assert.match(updates[0]!, /in \(select \* from unnest\(cast\(\$\d+ as (text|bigint)\[\]\), cast\(\$\d+ as bigint\[\]\)\)\)/)
      } else assert.ok(updates.every((q) => !q.includes('unnest')), updates.join('\n'))
    })
  }
})

async function seenQueries(upstream: Upstream): Promise<string[]> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: upstream.url })
  await client.connect()
  try {
    return (await client.query('select query from seen order by n')).rows.map((r) => String(r.query))
  } finally {
    await client.end()
  }
}
