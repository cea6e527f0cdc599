import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startThingsGateway } from '../plans/support/odd-upstream.js'
import { csvRows } from '../support/csv-rows.js'

/** Values a CSV can lose, confuse or run as a formula, each in a text field of the odd upstream. */
const THINGS = [
  { id: 'f1', name: '=HYPERLINK("http://x","y")', status: 'open', note: "'=already quoted" },
  { id: 'f2', name: '-12.50', status: 'open', note: '' },
  { id: 'f3', name: ' spaced ', status: 'open', note: null },
  { id: 'f4,"q"\r\nx', name: '\uFEFFbom 😀', status: 'open', note: '@SUM(A1)' },
  { id: 'f5', name: '\tTAB', status: 'open', note: '\rCR' },
  { id: 'f6', name: '+1', status: 'open', note: ' =1+1' },
  { id: 'f7', name: '-9007199254740993', status: 'open', note: "'" },
] as const

/** How a reader gets a value back from a cell, as the README says: unquoted empty is null; a leading ' was added. */
const valueOf = (cell: { text: string; quoted: boolean }) => (cell.text === '' && !cell.quoted ? null : cell.text.startsWith("'") ? cell.text.slice(1) : cell.text)

describe('CSV cells: every value read back exactly, none runs as a formula (an odd http upstream)', () => {
  let things: Awaited<ReturnType<typeof startThingsGateway>>
  let csv: string
  before(async () => {
    things = await startThingsGateway(THINGS as never)
    const { fx, token } = things
    const auth = { authorization: `Bearer ${token}` }
    const sel = (await (await fetch(`${fx.base}/v1/resources/things/selections`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ filter: { id: { in: THINGS.map((t) => t.id) } } }) })).json()) as any
    assert.equal(sel.count, THINGS.length)
    csv = await (await fetch(`${fx.base}/v1/selections/${sel.selection_id}/export?format=csv`, { headers: auth })).text()
  })
  after(async () => {
    await things?.close()
  })

  test('each value comes back from its cell: null and empty text apart, spaces at the ends kept, a real leading quote kept apart from an added one', () => {
    const [header, ...rows] = csvRows(csv)
    const col = (name: string) => header!.findIndex((h) => h.text === name)
    const byId = new Map(rows.map((r) => [valueOf(r[col('id')]!), r]))
    for (const t of THINGS)
      for (const field of ['id', 'name', 'note'] as const) {
        const cell = byId.get(t.id)?.[col(field)]
        assert.ok(cell, `row ${JSON.stringify(t.id)}`)
        assert.equal(valueOf(cell), t[field], `${field} of ${JSON.stringify(t.id)}: cell ${JSON.stringify(cell)}`)
      }
    // spaces at either end are quoted: a reader that trims unquoted cells keeps them
    assert.ok(csv.includes('," spaced ",'), csv)
  })

  test('no cell starts with a character a spreadsheet runs as a formula; a negative number stays a number', () => {
    const rows = csvRows(csv).slice(1)
    for (const row of rows)
      for (const cell of row) assert.doesNotMatch(cell.text, /^\s*[=+@\t\r]|^\s*-(?!\d+(\.\d+)?$)/, `cell ${JSON.stringify(cell.text)}`)
    assert.ok(csv.includes(',-12.50,') && csv.includes(',-9007199254740993,'), 'negative decimal and an integer past 2^53 as their exact digits, no quote mark added')
  })
})
