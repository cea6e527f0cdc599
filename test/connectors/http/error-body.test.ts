import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { envelopeSchema } from '../../../src/contract/index.js'
import { createHttpConnector } from '../../../src/connectors/http/index.js'
import { createCursorCodec, searchAll } from '../../../src/inventory/index.js'
import { collection, httpResource } from './fixtures.js'
import { sendJson, startUpstream, type SeenRequest } from './upstream-server.js'

// A 200 whose body says the request failed (`{"items": [], "error": "search backend timed out"}`, Slack's
// `ok: false`, JSend's `status: "error"`, GraphQL's partial answer with `errors` beside its data) is not a page of
// the list: read as one, an empty items array beside the error was the list's end, and a search said complete: true
// with no records, an absence the upstream never claimed.
const codec = createCursorCodec({ key: randomBytes(32) })
const scope = { resource: 'items', environment: 'test-upstream', visibility: 'all items', restricted: false }

/** Searches an offset upstream over 25 items whose answer at `offset` is `failing(page)`, others `{items}` (+ `extra`). */
async function searchWith(failing: (page: unknown[], from: number) => Record<string, unknown> | null, extra: Record<string, unknown> = {}, list: Record<string, unknown> = {}) {
  const items = collection(25)
  const up = await startUpstream((req: SeenRequest, res) => {
    const limit = Number(req.url.searchParams.get('limit') ?? 10)
    const numbered = req.url.searchParams.get('page')
    const from = numbered === null ? Number(req.url.searchParams.get('offset') ?? 0) : (Number(numbered) - 1) * limit
    const page = items.slice(from, from + limit)
    sendJson(res, 200, failing(page, from) ?? { items: page, ...extra })
  })
  try {
    const resource = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', page_size_param: 'limit', pagination: { style: 'offset' }, ...list } })
    return envelopeSchema.parse(await searchAll(createHttpConnector({ resource }), { resource: 'items', filter: {}, pageSize: 10 }, { maxPages: 20, deadlineMs: 10_000 }, { scope, cursorCodec: codec }))
  } finally {
    await up.close()
  }
}

const reasonOf = (env: Awaited<ReturnType<typeof searchWith>>) => env.incomplete_reasons.find((r) => r.code === 'SOURCE_UNAVAILABLE')

describe('a 200 answer whose body says it failed', () => {
  for (const [name, body, key] of [
    ['an error message beside no items', { items: [], error: 'search backend timed out' }, '"error"'],
    ['an error object beside no items', { items: [], error: { code: 'timeout' } }, '"error"'],
    ['ok: false (Slack)', { ok: false, items: [] }, '"ok"'],
    ['success: false', { success: false, items: [] }, '"success"'],
    ['status: "error" (JSend)', { status: 'error', items: [] }, '"status"'],
    ['status: "fail" (JSend)', { status: 'fail', items: [] }, '"status"'],
    ['status: 500 (an HTTP status echoed in the envelope)', { status: 500, message: 'Internal error', items: [] }, '"status"'],
    ['statusCode: 503', { statusCode: 503, items: [] }, '"statusCode"'],
  ] as const) {
    test(`${name}, on the first page: not an empty list (was complete: true, 0 records)`, async () => {
      const env = await searchWith(() => body)
      assert.equal(env.complete, false, 'complete with no records')
      assert.equal(env.items.length, 0)
      assert.ok(reasonOf(env)?.message?.includes(key), JSON.stringify(env.incomplete_reasons))
      assert.equal(reasonOf(env)?.upstream_status, 200)
    })
  }

  test('an error on the third page of three ends nothing: the walk is not complete (was complete: true with 20 of 25)', async () => {
    const env = await searchWith((_page, from) => (from >= 19 ? { items: [], error: 'shard 2 unavailable' } : null))
    assert.equal(env.complete, false)
    assert.equal(env.items.length, 20)
    assert.ok(reasonOf(env)?.message?.includes('"error"'), JSON.stringify(env.incomplete_reasons))
  })

  test('GraphQL-style partial data with errors beside it is not the page (was complete: true, the failed field read as given)', async () => {
    const env = await searchWith((page) => ({ items: page, errors: [{ message: 'amount resolver failed', path: ['items', 1, 'amount'] }] }))
    assert.equal(env.complete, false)
    assert.ok(reasonOf(env)?.message?.includes('"errors"'), JSON.stringify(env.incomplete_reasons))
  })

  test('the read past a total that ended the walk, answered with an error, does not confirm the end (was complete: true)', async () => {
    // 25 items under page numbers, a total of 20 that counts less than the list: the read past the end fails
    const env = await searchWith((page, from) => (from >= 20 ? { items: [], error: 'shard 2 unavailable', total: 20 } : { items: page, total: 20 }), {}, { total_path: 'total', pagination: { style: 'page' } })
    assert.equal(env.complete, false, JSON.stringify(env.incomplete_reasons))
  })

  test('the message does not quote the error body (it may echo a record)', async () => {
    const env = await searchWith(() => ({ items: [], error: 'no customer named secret-value-7' }))
    assert.ok(!JSON.stringify(env).includes('secret-value-7'))
  })
})

describe('an answer whose error members say all is well', () => {
  test('error: null, errors: [], ok: true, success: true, status: "ok": complete', async () => {
    const env = await searchWith(() => null, { error: null, errors: [], ok: true, success: true, status: 'ok' })
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.equal(env.items.length, 25)
  })

  test('status: 200 or 0, statusCode: 200: complete', async () => {
    for (const extra of [{ status: 200 }, { status: 0 }, { statusCode: 200 }]) {
      const env = await searchWith(() => null, extra)
      assert.equal(env.complete, true, `${JSON.stringify(extra)}: ${JSON.stringify(env.incomplete_reasons)}`)
    }
  })

  test('error: "" and error: {} and error: false: complete', async () => {
    for (const error of ['', {}, false]) {
      const env = await searchWith(() => null, { error })
      assert.equal(env.complete, true, `${JSON.stringify(error)}: ${JSON.stringify(env.incomplete_reasons)}`)
    }
  })
})

describe('a member the config reads is the list, not an error', () => {
  test('items_path "errors" (a resource of error records): complete, all 25 (its non-empty array is the items)', async () => {
    const items = collection(25)
    const up = await startUpstream((req: SeenRequest, res) => {
      const from = Number(req.url.searchParams.get('offset') ?? 0)
      sendJson(res, 200, { errors: items.slice(from, from + Number(req.url.searchParams.get('limit') ?? 10)) })
    })
    try {
      const resource = httpResource({ sources: [{ name: 'main', base_url: up.origin }], list: { path: '/items', items_path: 'errors', page_size_param: 'limit', pagination: { style: 'offset' } } })
      const env = envelopeSchema.parse(await searchAll(createHttpConnector({ resource }), { resource: 'items', filter: {}, pageSize: 10 }, { maxPages: 20, deadlineMs: 10_000 }, { scope, cursorCodec: codec }))
      assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
      assert.equal(env.items.length, 25)
    } finally {
      await up.close()
    }
  })
})

describe('list.notice_members: members an upstream fills beside complete data (expansion errors, warnings)', () => {
  // Twitter v2 puts `errors` beside a complete `data` when an expansion (a referenced tweet) is gone: the page is the
  // whole page. Refused without a word from the config; read as a page when the config names the member a notice.
  const expansionErrors = { errors: [{ title: 'Not Found Error', resource_type: 'tweet' }] }

  test('without it: an errors member beside the items refuses the page (the conservative reading)', async () => {
    const env = await searchWith(() => null, expansionErrors)
    assert.equal(env.complete, false)
    assert.ok(reasonOf(env)?.message?.includes('"errors"'), JSON.stringify(env.incomplete_reasons))
  })

  test('notice_members ["errors"]: the same answers are pages, and the walk is complete with every item', async () => {
    const env = await searchWith(() => null, expansionErrors, { notice_members: ['errors'] })
    assert.equal(env.complete, true, JSON.stringify(env.incomplete_reasons))
    assert.equal(env.items.length, 25)
  })

  test('notice_members names only what it names: an error member it does not name still refuses the page', async () => {
    const env = await searchWith((_page, from) => (from >= 10 ? { items: [], error: 'shard 2 unavailable', ...expansionErrors } : null), expansionErrors, { notice_members: ['errors'] })
    assert.equal(env.complete, false)
    assert.ok(reasonOf(env)?.message?.includes('"error"'), JSON.stringify(env.incomplete_reasons))
  })
})
