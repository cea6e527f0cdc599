import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { WarrantError } from '../../src/contract/index.js'
import { createFieldPolicy } from '../../src/resources/field-policy.js'
import { httpResource } from '../connectors/http/fixtures.js'

// A filter may name any declared field that is not denied (an updated_at kept out of review_fields included), so
// the refusal of an unknown one lists those, with the field it is a slip of; a field list (what is returned) names
// the review fields. It used to list the review fields for a filter too: an agent told "review fields are: id,
// status" never learnt that `updated_at`, which it had misspelt, could be filtered on.
describe('field policy: an unknown field names what may be used where it was named', () => {
  const config = httpResource(
    { sources: [{ name: 'main', base_url: 'http://127.0.0.1:9' }] },
    { fields: { id: 'string', status: 'string', amount: 'number', updated_at: 'timestamp', secret: 'string', version: 'integer' }, denied_fields: ['secret'], review_fields: ['id', 'status'] },
  )
  const policy = createFieldPolicy(config)
  const refusal = (run: () => void): WarrantError => {
    try {
      run()
    } catch (error) {
      assert.ok(error instanceof WarrantError)
      return error
    }
    assert.fail('expected a refusal')
  }

  test('a filter on a misspelt field: the fields a filter may use, and the one meant', () => {
    const error = refusal(() => policy.checkFilter({ updatedat: { gt: '2024-01-01T00:00:00Z' } }))
    assert.equal(error.code, 'invalid_request')
    assert.match(error.message, /unknown field "updatedat"; did you mean "updated_at"\?/)
    assert.match(error.message, /fields a filter may use: id, status, amount, updated_at, version/)
    assert.doesNotMatch(error.message, /secret/)
    assert.deepEqual(error.details, { field: 'updatedat' })
    // and the field it names is one a filter does take
    policy.checkFilter({ updated_at: { gt: '2024-01-01T00:00:00Z' } })
  })

  test('a field list naming an unknown field: the review fields, which are what is returned', () => {
    const error = refusal(() => policy.fields(['colour']))
    assert.equal(error.code, 'invalid_request')
    assert.match(error.message, /unknown field "colour"; review fields are: id, status/)
  })
})
