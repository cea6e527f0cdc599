import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseConfig, versionPlacementOf } from '../../src/config/index.js'
import { WarrantError } from '../../src/contract/index.js'
import { startDemoGateway, type GatewayFixture } from '../support/gateway-fixture.js'
import { allResults, caller, selectProposeApprove, waitForOperation, type Caller } from './support/flow.js'
import { docIdOf, docsResourceConfig, seedDoc, startDocsUpstream, type DocsUpstream } from './support/docs-upstream.js'

const COUNT = 12
const PAUSE = { type: 'set_status', status: 'paused' }
const REPLACE = { style: 'replace', path: '/docs/{id}', version: { in: 'body', path: '_rev' }, new_version: { from: 'body', path: 'rev' } }

/** A demo gateway that also serves `docs` over a CouchDB-like loopback upstream with its own write config. */
async function withDocs(
  write: Record<string, unknown>,
  expect: Record<string, unknown> | undefined,
  body: (ctx: { fx: GatewayFixture; upstream: DocsUpstream; agent: Caller; reviewer: Caller }) => Promise<void>,
): Promise<void> {
  const upstream = await startDocsUpstream(COUNT)
  let fx: GatewayFixture | undefined
  try {
    fx = await startDemoGateway({
      store: 'sqlite',
      count: 20,
      edit: (raw) => {
        raw.resources.docs = docsResourceConfig(upstream.origin, write, expect)
        raw.execution = { concurrency: 1, batch_size: 5 }
      },
    })
    const token = (await fx.gateway.principals.issue({ name: 'docs-agent', role: 'agent', scopes: { resources: ['docs'], actions: ['set_status'] } })).token
    await body({ fx, upstream, agent: caller(fx.base, token), reviewer: fx.as('reviewer') })
  } finally {
    await fx?.close()
    await upstream.close()
  }
}

async function run(agent: Caller, reviewer: Caller, key: string): Promise<any> {
  const { selection } = await selectProposeApprove(agent, [reviewer], 'docs', { filter: { status: 'active' } }, PAUSE)
  assert.equal(selection.count, COUNT)
  const commit = await agent('POST', '/v1/resources/docs/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action: PAUSE }, { 'idempotency-key': key })
  assert.equal(commit.status, 202, JSON.stringify(commit.body))
  return waitForOperation(agent, commit.body.operation_id)
}

/** Every field but `status` and `_rev`, as JSON text: what a write of `status` must leave byte for byte. */
function outsideTheSet(doc: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(doc).filter(([k]) => k !== 'status' && k !== '_rev').map(([k, v]) => [k, JSON.stringify(v)]))
}

function refusal(write: Record<string, unknown>): string {
  try {
    parseConfig({ resources: { docs: docsResourceConfig('http://127.0.0.1:9', write) } }, 'test config')
  } catch (error) {
    assert.ok(error instanceof WarrantError)
    return error.message
  }
  assert.fail('the config was accepted')
}

describe('writes never destroy what they do not set', () => {
  test('a PUT whose body is only the set fields is refused at load, and the message names the fix', () => {
    const message = refusal({ method: 'PUT', path: '/docs/{id}', body: { status: '{{set.status}}' } })
    assert.match(message, /resources\.docs\.actions\.set_status\.write\.method: a PUT replaces the whole representation/)
    assert.match(message, /style: replace/)
    assert.match(refusal({ style: 'replace', path: '/docs/{id}', if_match: false }), /write\.version: a replacing write without its version .* \{in: body, path: _rev\}/)
    assert.match(refusal({ style: 'replace', path: '/docs/{id}', body: { status: '{{set.status}}' }, version: { in: 'body', path: '_rev' } }), /write\.body: a replacing write sends the whole representation/)
    assert.match(refusal({ method: 'DELETE', path: '/docs/{id}' }), /write\.method: a DELETE removes the record/)
  })

  test('a PUT declared as merging when it replaces: the first target fails on the fields it erased and the operation halts', () =>
    withDocs({ method: 'PUT', put_merges: true, path: '/docs/{id}', body: { status: '{{set.status}}', _rev: '{{version}}' }, if_match: false }, undefined, async ({ upstream, agent, reviewer }) => {
      const operation = await run(agent, reviewer, 'put-merges')
      assert.equal(operation.state, 'halted')
      assert.equal(operation.halt_reason.rule, 'effect_contradicted')
      assert.equal(operation.halt_reason.target_id, docIdOf(1))
      // The PUT answer ({ok, id, rev}) is not the record: it is re-read, and it lost declared fields with the rest.
      assert.match(operation.halt_reason.message, /the record read back is not the record it was: .*lacks declared field\(s\) "name", "secret"/)
      assert.doesNotMatch(JSON.stringify(operation), /sk-1-do-not-leak|Lyon/, 'no value of an undeclared or denied field is reported')
      assert.deepEqual([operation.counts.failed, operation.counts.succeeded, operation.counts.pending], [1, 0, COUNT - 1])
      assert.deepEqual(upstream.writes, [`PUT ${docIdOf(1)}`], 'the blast radius stops at the first record')
    }))

  test('replace style: each record is re-read and sent whole; every field outside the set is byte for byte what it was', () =>
    withDocs(REPLACE, undefined, async ({ fx, upstream, agent, reviewer }) => {
      const before = new Map([...upstream.docs.keys()].map((id) => [id, outsideTheSet(upstream.doc(id))]))
      const operation = await run(agent, reviewer, 'replace')
      assert.equal(operation.state, 'succeeded', JSON.stringify(operation))
      assert.equal(operation.counts.succeeded, COUNT)
      for (const [id, fields] of before) {
        assert.equal(upstream.doc(id).status, 'paused')
        assert.deepEqual(outsideTheSet(upstream.doc(id)), fields, `${id} kept every field it had`)
      }
      assert.ok(upstream.writes.every((w) => w.startsWith('PUT ')))
      // The new version is the one the answer states (`rev`), and it is the document's.
      const rows = await fx.gateway.store.db.selectFrom('operation_targets').select(['record_id', 'after_version']).where('operation_id', '=', operation.operation_id).execute()
      assert.equal(rows.length, COUNT)
      for (const r of rows) assert.equal(r.after_version, upstream.doc(r.record_id)._rev)
      const results = await allResults(agent, operation.operation_id)
      assert.doesNotMatch(JSON.stringify(results), /sk-\d+-do-not-leak|Lyon|history/, 'the representation is never returned')
    }))

  test('replace style on a document holding a number JSON rounds: that target fails and is never sent; its number stays as it was', () =>
    withDocs(REPLACE, undefined, async ({ upstream, agent, reviewer }) => {
      // an undeclared 64-bit reference, as the API wrote it: JSON.parse reads it as 9007199254740992
      const held = docIdOf(2)
      upstream.docs.set(held, upstream.docs.get(held)!.replace('"history":', '"ledger_ref":9007199254740993,"history":'))
      const operation = await run(agent, reviewer, 'replace-rounded')
      assert.equal(operation.counts.failed, 1, JSON.stringify(operation.counts))
      assert.equal(operation.counts.succeeded, COUNT - 1)
      const failed = await allResults(agent, operation.operation_id, 'failed')
      assert.deepEqual(failed.map((r) => [r.id, r.reason]), [[held, 'write_refused']])
      assert.match(failed[0].error, /holds a number with more digits than a JSON number keeps .* replacing it would write that value back rounded.*nothing was sent/)
      assert.ok(!upstream.writes.includes(`PUT ${held}`), 'nothing was sent for it')
      assert.match(upstream.docs.get(held)!, /"ledger_ref":9007199254740993,/, 'its number is byte for byte what it was')
      assert.equal(upstream.doc(held).status, 'active')
    }))

  test('replace style on a stale revision: the upstream answers 409, the target is skipped and never written', () =>
    withDocs(REPLACE, undefined, async ({ upstream, agent, reviewer }) => {
      const raced = docIdOf(3)
      // Another client writes the document between Warrant's re-read and its PUT.
      upstream.beforePut = (id) => {
        if (id === raced && upstream.doc(id).name === `Doc 3`) upstream.touch(id, { name: 'renamed by someone else' })
      }
      const operation = await run(agent, reviewer, 'stale')
      assert.equal(operation.counts.skipped, 1)
      assert.equal(operation.counts.succeeded, COUNT - 1)
      const skipped = await allResults(agent, operation.operation_id, 'skipped')
      assert.deepEqual(skipped.map((r) => [r.id, r.upstream_status]), [[raced, 409]])
      assert.match(skipped[0].error, /reported a conflict: 409.*nothing was written/)
      const doc = upstream.doc(raced)
      assert.deepEqual([doc.status, doc.name], ['active', 'renamed by someone else'], 'the other writer\'s change stands; ours was not applied')
    }))

  // The answer is not the target, so it proves nothing of it; the operation halts (the upstream does not answer as
  // approved). But the write landed on the target: recorded `failed` (effect_contradicted, after null) without a
  // look at it, the ledger said the record holds something else, and a compensation never restored it. Re-read,
  // the target is recorded as it shows, as for a status the action does not expect.
  test('a 200 whose body is another record: the operation halts, and the target is recorded as it shows re-read', () =>
    withDocs({ path: '/docs/{id}', body: { status: '{{set.status}}' }, if_match: true }, undefined, async ({ upstream, agent, reviewer }) => {
      upstream.patch = 'other_record'
      const operation = await run(agent, reviewer, 'other-record')
      assert.equal(operation.state, 'halted')
      assert.equal(operation.halt_reason.rule, 'effect_contradicted')
      assert.match(operation.halt_reason.message, /answered with record "doc-\d+", not the target "doc-001"/)
      assert.equal(upstream.doc(docIdOf(1)).status, 'paused', 'the upstream applied the write to the target')
      assert.deepEqual([operation.counts.succeeded, operation.counts.failed, operation.counts.pending], [1, 0, COUNT - 1], JSON.stringify(operation.counts))
      const [first] = await allResults(agent, operation.operation_id, 'succeeded')
      assert.equal(first.reason, 'other_record_answer')
      assert.deepEqual(first.after, { status: 'paused' })
      assert.match(first.error, /re-read, the target holds the approved effect/)
    }))

  test('a status-only expect on an upstream whose PATCH destroys: the record is re-read, the first target fails, the operation halts', () =>
    withDocs({ path: '/docs/{id}', body: { status: '{{set.status}}' }, if_match: true }, { status: [204], fields: {} }, async ({ upstream, agent, reviewer }) => {
      upstream.patch = 'destroy'
      const operation = await run(agent, reviewer, 'status-only')
      assert.equal(operation.state, 'halted')
      assert.equal(operation.halt_reason.rule, 'effect_contradicted')
      assert.match(operation.halt_reason.message, /the record read back is not the record it was: .*lacks declared field\(s\) "name", "secret"/)
      assert.deepEqual([operation.counts.failed, operation.counts.succeeded, operation.counts.pending], [1, 0, COUNT - 1])
      assert.equal(upstream.writes.length, 1)
    }))

  test('a PATCH that silently drops the fields no config declares: the re-read representation shows it, the operation halts', () =>
    withDocs({ path: '/docs/{id}', body: { status: '{{set.status}}' }, if_match: true }, { status: [204], fields: {} }, async ({ upstream, agent, reviewer }) => {
      upstream.patch = 'strip'
      const operation = await run(agent, reviewer, 'strip')
      assert.equal(operation.state, 'halted')
      assert.equal(operation.halt_reason.rule, 'effect_contradicted')
      assert.match(operation.halt_reason.message, /"profile", "history", "odd key", "ratio" vanished .*\(re-read after the write\)/)
      assert.equal(upstream.writes.length, 1)
    }))

  test('action endpoint: POST /docs/{id}/pause answers 202 without the record; each is re-read and checked whole', () =>
    withDocs({ style: 'action', path: '/docs/{id}/pause', if_match: false }, { status: [202] }, async ({ upstream, agent, reviewer }) => {
      const operation = await run(agent, reviewer, 'action')
      assert.equal(operation.state, 'succeeded', JSON.stringify(operation))
      assert.ok(upstream.bodies.every((b) => b === ''), 'an action endpoint gets no body of the record')
      for (let i = 1; i <= COUNT; i++) assert.deepEqual(outsideTheSet(upstream.doc(docIdOf(i))), outsideTheSet(seedDoc(i)))
    }))

  test('action endpoint that also erases a field: the re-read shows it, the first target fails, the operation halts', () =>
    withDocs({ style: 'action', path: '/docs/{id}/pause', if_match: false }, { status: [202] }, async ({ upstream, agent, reviewer }) => {
      upstream.pauseErases = true
      const operation = await run(agent, reviewer, 'action-erases')
      assert.equal(operation.state, 'halted')
      assert.match(operation.halt_reason.message, /"profile" vanished/)
      assert.equal(upstream.writes.length, 1)
    }))
})

describe('what the config allows', () => {
  test('a write without a style is a PATCH with If-Match, as before', () => {
    const ok = parseConfig({ resources: { docs: docsResourceConfig('http://127.0.0.1:9', { path: '/docs/{id}', body: { status: '{{set.status}}' } }) } })
    const write = ok.resources.docs!.actions.set_status!.write!
    assert.deepEqual([write.style, write.method, versionPlacementOf(write)], ['patch', 'PATCH', { in: 'header', name: 'If-Match' }])
  })
})
