import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

// Imports the package by its own name, as another project would: this resolves through package.json
// "exports" to the compiled dist/, which `npm install` (prepare) and `npm test` build.
test("another project can import { searchAll, decide, envelopeSchema } from 'warrant' and run the contract fixtures", async () => {
  const warrant = await import('warrant')
  assert.equal(typeof warrant.searchAll, 'function')
  assert.equal(typeof warrant.decide, 'function')
  assert.equal(typeof warrant.envelopeSchema.parse, 'function')
  assert.equal(typeof warrant.createCursorCodec, 'function')
  const fixturesUrl = import.meta.resolve('warrant/fixtures/contract-cases.json')
  const cases = JSON.parse(readFileSync(new URL(fixturesUrl), 'utf8')) as { case: string; use: string; response: unknown; expected_agent_decision: string }[]
  assert.ok(cases.length >= 20)
  for (const c of cases) {
    const envelope = warrant.envelopeSchema.parse(c.response)
    assert.equal(warrant.decide(envelope, c.use as 'report').decision, c.expected_agent_decision, c.case)
  }
})
