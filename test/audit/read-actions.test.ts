import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Command } from 'commander'
import { READ_ACTIONS } from '../../src/audit/index.js'
import { warrantProgram } from '../../src/cli/main.js'
import { WARRANT_TOOLS } from '../../src/mcp/index.js'

/**
 * READ_ACTIONS (src/audit/reads.ts) is kept by hand: the audit module may not import the surfaces that define the
 * tools and commands. It drifted: `cli:search`, `cli:token list`, `cli:audit query` and other reads showed in every
 * listing "without reads" as if they had acted. This test walks every MCP tool and every CLI command there is and
 * holds the list to them: a tool is a read exactly when it declares `readOnlyHint`; a command is classified below,
 * and a command added without being classified fails here, so the list cannot drift again.
 */

/** The CLI commands that change something (or may: `check --probe` writes a probe), each recorded as `cli:PATH`. */
const CLI_WRITES = [
  'select',
  'plan',
  'approve',
  'commit',
  'recover',
  'compensate',
  'remainder',
  'reconcile',
  'operation reconcile',
  'audit acknowledge',
  'audit checkpoint',
  'token create',
  'token revoke',
  'principal disable',
  'principal enable',
  'check',
  'store prune', // --dry-run only reads: one action name either way, and a sweep deletes
]
/** Commands that record no `cli:` row of their own: the requests they serve are recorded by their surfaces. */
const SERVING = ['serve', 'mcp']

function leafCommands(command: Command, path: readonly string[] = []): string[] {
  if (command.commands.length === 0) return [path.join(' ')]
  return command.commands.flatMap((sub) => leafCommands(sub, [...path, sub.name()]))
}

describe('READ_ACTIONS holds every tool and command that only reads, and nothing that writes', () => {
  test('MCP: exactly the tools that declare readOnlyHint', () => {
    const reads = WARRANT_TOOLS.filter((tool) => tool.annotations.readOnlyHint === true).map((tool) => `mcp:${tool.name}`)
    assert.ok(reads.length > 0)
    assert.deepEqual(READ_ACTIONS.filter((a) => a.startsWith('mcp:')).sort(), reads.sort())
  })

  test('CLI: every command is a read (in READ_ACTIONS) or a write (CLI_WRITES), never both, and each listed one exists', () => {
    const commands = leafCommands(warrantProgram()).filter((path) => !SERVING.includes(path))
    const reads = READ_ACTIONS.filter((a) => a.startsWith('cli:')).map((a) => a.slice('cli:'.length))
    const unclassified = commands.filter((path) => !reads.includes(path) && !CLI_WRITES.includes(path))
    assert.deepEqual(unclassified, [], 'a command that only reads goes into READ_ACTIONS (src/audit/reads.ts); one that writes into CLI_WRITES here')
    assert.deepEqual(reads.filter((path) => CLI_WRITES.includes(path)), [], 'a command that writes is no read')
    assert.deepEqual([...reads, ...CLI_WRITES].filter((path) => !commands.includes(path)), [], 'no such command')
  })

  test('every entry is a tool or a command', () => {
    assert.deepEqual(READ_ACTIONS.filter((a) => !a.startsWith('mcp:') && !a.startsWith('cli:')), [])
  })
})
