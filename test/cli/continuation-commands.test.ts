import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { after, before, describe, test } from 'node:test'
import type { Envelope } from '../../src/contract/index.js'
import { renderEnvelope } from '../../src/cli/render-envelope.js'
import { createHttpItemsWorkspace } from '../support/cli-http-workspace.js'
import { CLI_ENTRY, TSX_LOADER } from '../support/cli-config.js'
import { collection } from '../connectors/http/fixtures.js'
import { sendJson } from '../connectors/http/upstream-server.js'

const run = promisify(execFile)
const ITEMS = collection(10).map(({ id, status, version }) => ({ id, status, version }))

/**
 * `warrant search` printed "Continue with a deadline of at least N ms:" over a command without `--deadline-ms`:
 * run as printed, it walked under the default deadline, not the one the words asked for (and it dropped the
 * search's own flags: `--config`, `--page-size`, the budget). A continuation without a cursor printed an empty
 * line where the command belongs. The printed command is now the same search, with the flag the words name.
 */
describe('warrant search: the printed continuation command does what its words say', () => {
  let ws: Awaited<ReturnType<typeof createHttpItemsWorkspace>>
  before(async () => {
    // the first page answers at once; the next takes 1.2 s: a 1 s deadline stops the walk while it is read
    ws = await createHttpItemsWorkspace(async (req, res) => {
      if (req.url.pathname !== '/items') return sendJson(res, 404, { error: 'no' })
      const at = Number(req.url.searchParams.get('cursor') ?? 0)
      if (at > 0) await new Promise((resolve) => setTimeout(resolve, 1200))
      sendJson(res, 200, { items: ITEMS.slice(at, at + 5), next_cursor: at + 5 < ITEMS.length ? String(at + 5) : null })
    })
  })
  after(async () => {
    await ws?.drop()
  })

  /** The printed line, run by bash as a person pastes it, `warrant` being this checkout's CLI. */
  const asPrinted = async (line: string) => {
    const env: NodeJS.ProcessEnv = { ...process.env, WARRANT_LOG_LEVEL: 'silent' }
    delete env.WARRANT_CONFIG
    delete env.WARRANT_TOKEN
    const script = `warrant() { "${process.execPath}" --import "${TSX_LOADER}" "${CLI_ENTRY}" "$@"; }\n${line}`
    try {
      const { stdout, stderr } = await run('bash', ['-c', script], { cwd: '/', env })
      return { code: 0, stdout, stderr }
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string }
      return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
    }
  }

  test('retry_with_deadline: the command carries --deadline-ms N and the search\'s flags; run as printed, it finishes the walk', { timeout: 120_000 }, async () => {
    const first = await ws.warrant(['search', 'items', '--filter', 'status!=gone', '--page-size', '5', '--deadline-ms', '1000'])
    assert.equal(first.code, 5, `${first.stdout}\n${first.stderr}`)
    const lines = first.stdout.split('\n')
    const at = lines.findIndex((l) => l.startsWith('Continue with a deadline of at least 2000 ms'))
    assert.ok(at >= 0, first.stdout)
    const command = lines[at + 1]!.trim()
    assert.match(command, /^warrant search items /, command)
    assert.match(command, / --deadline-ms 2000( |$)/, command)
    assert.match(command, / --filter 'status!=gone'/, command)
    assert.match(command, / --page-size 5( |$)/, command)
    assert.match(command, / --cursor \S+/, command)
    // run from another folder: the printed command names the config it was given
    const again = await asPrinted(command)
    assert.equal(again.code, 0, `${command}\n${again.stdout}\n${again.stderr}`)
    assert.match(again.stdout, /^COMPLETE: the walk found 10 matching record\(s\)/, again.stdout)
  })
})

describe('renderEnvelope: a continuation without a cursor says to run the same search again, with the right flag', () => {
  const envelope = (continuation: Envelope['continuation']): Envelope =>
    ({
      status: 'partial',
      complete: false,
      truncated: true,
      items: [],
      incomplete_reasons: [{ code: 'TIME_BUDGET_EXCEEDED', message: 'the walk ran out of time' }],
      continuation,
      scope: { resource: 'items', environment: 'test', visibility: 'all', snapshot: null, consistent_snapshot: false, stability: 'unproven', sources: ['main'] },
      page: { returned: 0, requested_size: 5, ordering: 'id', pages_read: 1 },
      warnings: [],
    }) as unknown as Envelope
  const command = (change: { readonly cursor?: string; readonly deadlineMs?: number }) =>
    `warrant search items${change.deadlineMs === undefined ? '' : ` --deadline-ms ${change.deadlineMs}`}${change.cursor === undefined ? '' : ` --cursor ${change.cursor}`}`

  test('retry_with_deadline without a cursor: the same search again with --deadline-ms', () => {
    const lines = renderEnvelope(envelope({ kind: 'retry_with_deadline', minimum_deadline_ms: 4000 }), { resumeCommand: command }).split('\n')
    const at = lines.findIndex((l) => /deadline of at least 4000 ms/.test(l))
    assert.ok(at >= 0, lines.join('\n'))
    assert.match(lines[at]!, /^Run the same search again \(no cursor resumes this walk\) with a deadline of at least 4000 ms:$/)
    assert.equal(lines[at + 1], '  warrant search items --deadline-ms 4000')
  })

  test('retry_after without a cursor: the same search again after the wait', () => {
    const lines = renderEnvelope(envelope({ kind: 'retry_after', retry_after_seconds: 7, not_before: '2031-06-01T09:00:07.000Z' }), { resumeCommand: command }).split('\n')
    const at = lines.findIndex((l) => /2031-06-01T09:00:07.000Z/.test(l))
    assert.ok(at >= 0, lines.join('\n'))
    assert.match(lines[at]!, /^Run the same search again \(no cursor resumes this walk\) after 2031-06-01T09:00:07.000Z \(in 7s\) with:$/)
    assert.equal(lines[at + 1], '  warrant search items')
  })
})
