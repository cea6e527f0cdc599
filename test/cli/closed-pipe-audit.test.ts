import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { CLI_ENTRY, createCliWorkspace, TSX_LOADER } from '../support/cli-config.js'

/**
 * README, audit: every `warrant` command leaves a row (`cli:<command>`). A reader that closes the pipe early
 * (`warrant search R --json | head`) made the CLI exit on EPIPE at once, before that row was written: the search
 * was run, exit status and all, and the log never knew.
 */
describe('warrant … | head: the command still leaves its audit row (sqlite)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  before(async () => {
    ws = await createCliWorkspace({ count: 3000 })
  })
  after(async () => {
    await ws?.drop()
  })

  test('search --json read for one chunk, then the pipe closed: exit 5 for the partial search, and a cli:search row', async () => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'search', 'subscriptions', '--max-items', '2500', '--json', '--config', ws.configPath], {
      cwd: ws.dir,
      env: { ...process.env, WARRANT_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stdout.once('data', () => child.stdout.destroy())
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    assert.equal(code, 5, stderr)
    assert.equal(stderr, '')
    const db = new Database(join(ws.dir, 'warrant.db'), { readonly: true })
    const rows = db.prepare("select summary from audit_events where action = 'cli:search'").all() as { summary: string }[]
    db.close()
    assert.equal(rows.length, 1, 'the search left its row')
    assert.equal(JSON.parse(rows[0]!.summary).options.maxItems, 2500)
  })
})
