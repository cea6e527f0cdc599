import assert from 'node:assert/strict'
import { tmpdir } from 'node:os'
import { describe, test } from 'node:test'
import { WARRANT_TOOLS } from '../../src/mcp/tools/index.js'
import { runWarrant } from '../support/cli-config.js'

/**
 * "Propose the rest" of a halted compensation is not "the same action": it is a compensation of the original
 * operation writing the inverse (the recorded before-values) on the targets the compensation did not finish. The MCP
 * tool and the CLI command described only the ordinary case, so an agent reading them expected the original action
 * again (watched fail before the fix, stop 44).
 */
describe('the rest of an operation, as its tool and command describe it', () => {
  const saysWhatACompensationsRestDoes = (text: string) => {
    assert.match(text, /compensation/i, text)
    assert.match(text, /before-values?/, text)
    assert.match(text, /not finish/, text)
  }

  test('the MCP tool propose_remainder says what the rest of a compensation writes', () => {
    const tool = WARRANT_TOOLS.find((t) => t.name === 'propose_remainder')
    assert.ok(tool)
    saysWhatACompensationsRestDoes(tool.description)
  })

  test('warrant remainder --help says what the rest of a compensation writes', async () => {
    const help = await runWarrant(['remainder', '--help'], tmpdir())
    assert.equal(help.code, 0, help.stderr)
    saysWhatACompensationsRestDoes(help.stdout.replace(/\s+/g, ' '))
  })
})
