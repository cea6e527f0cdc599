import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { httpResource } from './fixtures.js'
import { sendJson, startUpstream } from './upstream-server.js'

// Keyset paging starts each page after the last item's key (`amount > 40`). On a field two records share
// (`pagination.field: amount`, a timestamp, a status) the records sharing a page's last key are never read:
// the walk said complete: true with 23 of 25 records (stability "unproven" hedged concurrent change; these
// are lost with the data standing still). A page holding two records under one key proves the field is not
// unique: the walk is not complete and names pagination.field.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }
// amounts 0, 0, 10, 10, 20, 20 … (or one per record)
const itemsOf = (shared: boolean) =>
  Array.from({ length: 25 }, (_, i) => ({ id: `r${String(i + 1).padStart(3, '0')}`, status: 'active', amount: (shared ? Math.floor(i / 2) : i) * 10, version: 1 }))

async function searchKeyset(items: readonly { amount: number }[], field: string, pageSize: number) {
  const up = await startUpstream((req, res) => {
    const after = req.url.searchParams.get('after')
    const key = (i: (typeof items)[number]) => (field === 'id' ? (i as unknown as { id: string }).id : i.amount)
    const rest = after === null ? items : items.filter((i) => (field === 'id' ? key(i) > after : (key(i) as number) > Number(after)))
    sendJson(res, 200, { items: rest.slice(0, Number(req.url.searchParams.get('limit') ?? 10)) })
  })
  try {
    const resource = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', page_size_param: 'limit', pagination: { style: 'keyset', param: 'after', field } } })
    return envelopeSchema.parse(await searchAll(createHttpConnector({ resource }), { resource: 'items', filter: {}, pageSize }, { maxPages: 20, deadlineMs: 10_000 }, { scope, cursorCodec: codec }))
  } finally {
    await up.close()
  }
}

describe('keyset paging on a field records share', () => {
  test('two records of a page under one key: not complete, naming pagination.field (was complete: true with 23 of 25)', async () => {
    const env = await searchKeyset(itemsOf(true), 'amount', 9)
    assert.equal(env.complete, false, `complete with ${env.items.length} of 25`)
    const reason = env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')
    assert.ok(reason?.message?.includes('pagination.field "amount" is not unique'), JSON.stringify(env.incomplete_reasons))
  })

  test('a field unique per record (amounts all differ, or the id): complete, all 25', async () => {
    for (const [field, shared] of [['amount', false], ['id', true]] as const) {
      const env = await searchKeyset(itemsOf(shared), field, 9)
      assert.equal(env.complete, true, `${field}: ${JSON.stringify(env.incomplete_reasons)}`)
      assert.equal(env.items.length, 25)
    }
  })
})
