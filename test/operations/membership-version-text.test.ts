import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createHttpConnector } from '../../src/connectors/http/index.js'
import { checkBatchMembership } from '../../src/operations/membership.js'
import type { OperationExecution } from '../../src/operations/types.js'
import type { OperationTargetRow } from '../../src/store/index.js'
import { httpResource } from '../connectors/http/fixtures.js'
import { sendJson, startUpstream, type TestUpstream } from '../connectors/http/upstream-server.js'

/**
 * A member frozen with version "" (a selection frozen before records with no version were refused) and read
 * back at ETag "v1": the batch check halted `membership_changed`, 'member "u1" is at version "v1", not the  the
 * selection froze' — a blank where the version goes, and a change it cannot know of. It now says the member was
 * frozen with no version, so whether it changed cannot be told (`membership_unverifiable`); a real change says
 * both versions in a sentence that reads.
 */
describe('batch membership: how a frozen version is worded', () => {
  let upstream: TestUpstream
  before(async () => {
    upstream = await startUpstream((req, res) => sendJson(res, 200, { id: req.url.pathname.slice('/items/'.length), status: 'active', amount: 1 }, { etag: '"v1"' }))
  })
  after(() => upstream.close())

  const check = (expected: string) => {
    const config = httpResource({ sources: [{ name: 'main', base_url: upstream.origin }], version: { from: 'etag' } }, { fields: { id: 'string', status: 'string', amount: 'number' } })
    const execution = { plan: { compensates: null }, selection: { selector: { filter: {}, exclude: [] } } } as unknown as OperationExecution
    const target = { operation_id: 'op', ord: 1, record_id: 'u1', expected_version: expected, state: 'pending' } as OperationTargetRow
    return checkBatchMembership(createHttpConnector({ resource: config }), execution, [target], config.fields)
  }

  it('frozen with no version: unverifiable, never "changed", and no blank in the sentence', async () => {
    const result = await check('')
    assert.equal(result.kind, 'changed')
    if (result.kind !== 'changed') return
    assert.equal(result.rule, 'membership_unverifiable')
    assert.match(result.message, /member "u1" was frozen with no version/)
    assert.doesNotMatch(result.message, /  /)
  })

  it('frozen at another version: changed, naming both', async () => {
    const result = await check('"v0"')
    assert.equal(result.kind === 'changed' && result.rule, 'membership_changed')
    assert.equal(result.kind === 'changed' && result.message, 'member "u1" is at version "v1", not at version "v0" as the selection froze it')
  })
})
