import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { CLI_ENTRY, createCliWorkspace, TSX_LOADER } from '../support/cli-config.js'

const run = promisify(execFile)
/** The terminal's in-place redraw: carriage return, then erase the line. */
const REDRAW = '\r\x1b[2K'
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

describe('progress on long work: a live line on a terminal, lines on stderr off one, --quiet (real subprocesses)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let reviewer = ''
  before(async () => {
    ws = await createCliWorkspace({ count: 1500 })
    const issued = await ws.warrant(['token', 'create', '--role', 'reviewer', '--name', 'rita', '--json'])
    assert.equal(issued.code, 0, issued.stderr)
    reviewer = JSON.parse(issued.stdout).token
  })
  after(async () => {
    await ws?.drop()
  })

  /** Runs the CLI under a pseudo-terminal (util-linux `script`): stdout and stderr arrive together, as a person sees them. */
  async function inTerminal(args: readonly string[]): Promise<{ code: number; output: string }> {
    const command = [process.execPath, '--import', TSX_LOADER, CLI_ENTRY, ...args, '--config', ws.configPath].map(quote).join(' ')
    try {
      const { stdout } = await run('script', ['-qec', command, '/dev/null'], { cwd: ws.dir, env: { ...process.env, WARRANT_LOG_LEVEL: 'silent', COLUMNS: '200' }, maxBuffer: 64 * 1024 * 1024 })
      return { code: 0, output: stdout }
    } catch (error) {
      const e = error as { code?: number; stdout?: string }
      return { code: typeof e.code === 'number' ? e.code : 1, output: e.stdout ?? '' }
    }
  }

  async function approvedPlan(region: string) {
    const selection = JSON.parse((await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '-f', `region=${region}`, '-f', 'collection=active', '--json', '--quiet'])).stdout)
    const plan = JSON.parse((await ws.warrant(['plan', selection.selection_id, '--action', 'pause_collection', '--param', 'reason=progress test', '--json'])).stdout)
    const approved = await ws.warrant(['approve', plan.plan_id, '--digest', plan.plan_digest, '--token', reviewer])
    assert.equal(approved.code, 0, approved.stderr)
    return plan as { plan_id: string; plan_digest: string; target_count: number; selection_id: string }
  }

  test('warrant select: progress lines on stderr through a pipe, stdout untouched; none with --quiet', async () => {
    const piped = await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '--page-size', '100'])
    assert.equal(piped.code, 0, piped.stderr)
    assert.match(piped.stdout, /^COMPLETE: selection/)
    const lines = piped.stderr.trim().split('\n')
    assert.ok(lines.length >= 2, piped.stderr)
    assert.equal(lines[0], 'selecting from subscriptions: reading the first page…')
    assert.match(lines.at(-1)!, /^selecting from subscriptions: \d+ page\(s\) read, [\d,]+ record\(s\) examined, [\d,]+ member\(s\) frozen, 0 excluded · \d+s$/)
    assert.ok(!piped.stderr.includes('\r'), 'no terminal control off a terminal')
    const quiet = await ws.warrant(['select', 'subscriptions', '-f', 'status=past_due', '--quiet'])
    assert.equal(quiet.code, 0)
    assert.equal(quiet.stderr, '')
  })

  test('warrant recover: progress lines on stderr through a pipe, as select has; none with --quiet', async () => {
    // an incomplete selection (its walk stopped after 2 pages), then its recovery: a walk of its own, as long
    const incomplete = async (region: string) => {
      const selected = await ws.warrant(['select', 'subscriptions', '-f', `region=${region}`, '--page-size', '50', '--max-pages', '2', '--json', '--quiet'])
      assert.equal(selected.code, 5, selected.stderr)
      return JSON.parse(selected.stdout).selection_id as string
    }
    const id = await incomplete('eu')
    const piped = await ws.warrant(['recover', id])
    assert.equal(piped.code, 0, piped.stderr)
    assert.match(piped.stdout, /^COMPLETE: selection/)
    const lines = piped.stderr.trim().split('\n')
    assert.ok(lines.length >= 2, `no progress line during the recovery's walk: ${JSON.stringify(piped.stderr)}`)
    assert.equal(lines[0], `recovering ${id} from subscriptions: reading the first page…`)
    assert.match(lines.at(-1)!, new RegExp(`^recovering ${id} from subscriptions: \\d+ page\\(s\\) read, 100 record\\(s\\) examined, 100 member\\(s\\) frozen, 0 excluded · \\d+s$`))
    assert.ok(!piped.stderr.includes('\r'), 'no terminal control off a terminal')
    const quiet = await ws.warrant(['recover', await incomplete('us'), '--quiet'])
    assert.equal(quiet.code, 0, quiet.stderr)
    assert.match(quiet.stdout, /^COMPLETE: selection/)
    assert.equal(quiet.stderr, '')
  })

  test('warrant select on a terminal: one live line redrawn in place, cleared before the answer', async () => {
    const tty = await inTerminal(['select', 'subscriptions', '-f', 'status=past_due', '--page-size', '50'])
    assert.equal(tty.code, 0, tty.output)
    assert.ok(tty.output.includes(`${REDRAW}selecting from subscriptions:`), JSON.stringify(tty.output.slice(0, 300)))
    const answer = tty.output.lastIndexOf('COMPLETE: selection')
    assert.ok(answer > tty.output.lastIndexOf(REDRAW), 'the live line is cleared before the answer is printed')
  })

  test('commit --wait: progress by outcome with rate; on a terminal a live line; exit 0 when every target succeeded', async () => {
    const plan = await approvedPlan('eu')
    const piped = await ws.warrant(['commit', plan.plan_id, '--digest', plan.plan_digest, '--key', 'progress-1', '--wait'])
    assert.equal(piped.code, 0, piped.stderr + piped.stdout)
    assert.match(piped.stderr.trim().split('\n').at(-1)!, new RegExp(`^succeeded: ${plan.target_count}/${plan.target_count} targets · succeeded ${plan.target_count}, failed 0, skipped 0, unknown 0 · [\\d.]+/s · \\d+s$`))
    assert.match(piped.stdout, /state: succeeded/)

    const second = await approvedPlan('us')
    const tty = await inTerminal(['commit', second.plan_id, '--digest', second.plan_digest, '--key', 'progress-2', '--wait'])
    assert.equal(tty.code, 0, tty.output)
    assert.match(tty.output, new RegExp(`${REDRAW.replace('[', '\\[')}\\w+: [\\d,]+/${second.target_count} targets · succeeded`))
  })

  test('operation watch follows an operation: exit 5 while it is still pending at the timeout, 0 once it has succeeded', async () => {
    const plan = await approvedPlan('apac')
    const queued = await ws.warrant(['commit', plan.plan_id, '--digest', plan.plan_digest, '--key', 'watch-1'])
    const operationId = /operation (op_\S+?),/.exec(queued.stdout)![1]!
    const waiting = await ws.warrant(['operation', 'watch', operationId, '--timeout-ms', '1500'])
    assert.equal(waiting.code, 5, waiting.stderr)
    assert.match(waiting.stdout, /state: pending \(not finished\)/)
    assert.match(waiting.stderr, new RegExp(`^pending: 0/${plan.target_count} targets`, 'm'))
    const done = await ws.warrant(['commit', plan.plan_id, '--digest', plan.plan_digest, '--key', 'watch-1', '--wait', '--quiet'])
    assert.equal(done.code, 0, done.stderr)
    assert.equal(done.stderr, '')
    const watched = await ws.warrant(['operation', 'watch', operationId])
    assert.equal(watched.code, 0, watched.stderr)
    assert.match(watched.stdout, /state: succeeded/)
    assert.match(watched.stderr, new RegExp(`^succeeded: ${plan.target_count}/${plan.target_count} targets`, 'm'))
  })

  test('audit verify reports progress on stderr and its answer on stdout', async () => {
    const verified = await ws.warrant(['audit', 'verify'])
    assert.equal(verified.code, 0, verified.stderr)
    assert.match(verified.stdout, /^audit log intact: \d+ rows/)
    assert.match(verified.stderr, /^verifying the audit chain…$/m)
    assert.match(verified.stderr, /^verifying the audit chain: [\d,]+ of ~[\d,]+ rows · \d+s$/m)
    const quiet = await ws.warrant(['audit', 'verify', '--quiet'])
    assert.equal(quiet.stderr, '')
  })
})
