import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createCliWorkspace, httpResourceWithSecret, type CliWorkspace } from '../support/cli-config.js'

/**
 * An upstream secret missing from the environment stops `warrant serve` at start, in one line that names the
 * config key it belongs to, so the engineer knows which resource's credential to set, not only the variable.
 */
describe('a missing upstream secret', () => {
  let ws: CliWorkspace
  before(async () => {
    ws = await createCliWorkspace({
      count: 10,
      edit: (raw) => {
        raw.resources.crm = httpResourceWithSecret('WARRANT_TEST_CRM_TOKEN')
      },
    })
  })
  after(async () => {
    await ws?.drop()
  })

  for (const value of [undefined, '', ' \n']) {
    it(`serve with WARRANT_TEST_CRM_TOKEN ${JSON.stringify(value)}: exit 2, naming resources.crm.connector.credential.secret`, async () => {
      const result = await ws.warrantWith(['serve', '--port', '0'], { WARRANT_TEST_CRM_TOKEN: value })
      assert.equal(result.code, 2, result.stderr)
      // the last line: the first start may log the store's migration before it
      assert.match(result.stderr.trim().split('\n').at(-1)!, /^warrant: invalid_request: resources\.crm\.connector\.credential\.secret: secret environment variable WARRANT_TEST_CRM_TOKEN is not set/)
    })
  }
})
