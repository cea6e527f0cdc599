import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { loadConfigFile } from '../../src/config/index.js'
import { createLogger, openGateway } from '../../src/gateway/index.js'
import { CLI_ENTRY, createCliWorkspace, TSX_LOADER } from '../support/cli-config.js'

/** A Node stack frame, as an uncaught error prints it. */
const STACK_FRAME = /^\s+at .+[(:]\d+/m

/** Runs the CLI, reads the first chunk of stdout, then closes the pipe, as `| head -n 1` does. */
function firstChunkThenClose(args: readonly string[], cwd: string): Promise<{ code: number | null; first: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args], { cwd, env: { ...process.env, WARRANT_LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let first = ''
    let stderr = ''
    child.stdout.once('data', (chunk: Buffer) => {
      first = chunk.toString()
      child.stdout.destroy()
    })
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.once('exit', (code) => resolve({ code, first, stderr }))
  })
}

describe('no input a person can type produces a stack trace (real subprocesses)', () => {
  let ws: Awaited<ReturnType<typeof createCliWorkspace>>
  let busy: Server
  before(async () => {
    ws = await createCliWorkspace({ count: 200 })
    // Enough audit rows that the export outlasts any pipe buffer.
    const gateway = await openGateway({ config: loadConfigFile(ws.configPath), log: createLogger({ level: 'silent' }) })
    for (let i = 0; i < 1500; i += 1) await gateway.audit.record({ actor: null, action: 'test:filler', operation_id: 'op_pipe', summary: { i, note: 'x'.repeat(80) } })
    await gateway.close()
    busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
  })
  after(async () => {
    await new Promise((resolve) => busy?.close(resolve))
    await ws?.drop()
  })

  test('serve on a port already in use: exit 2 and a sentence naming the port and --port', async () => {
    const port = (busy.address() as { port: number }).port
    const r = await ws.warrant(['serve', '--port', String(port)])
    assert.equal(r.code, 2, r.stdout + r.stderr)
    assert.match(r.stderr, new RegExp(`invalid_request: port ${port} on 127\\.0\\.0\\.1 is already in use.*--port`))
    assert.doesNotMatch(r.stderr, STACK_FRAME)
  })

  test('an unsupported store URL: exit 2 naming the stores that are supported', async () => {
    const config = join(ws.dir, 'mysql-store.json')
    writeFileSync(config, JSON.stringify({ store: 'mysql://root@127.0.0.1:3306/warrant', resources: {} }))
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'token', 'list', '--config', config], { cwd: ws.dir, stdio: ['ignore', 'ignore', 'pipe'] })
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      child.once('exit', (code) => resolve({ code, stderr }))
    })
    assert.equal(r.code, 2, r.stderr)
    assert.match(r.stderr, /invalid_request: store URL scheme "mysql:" is not supported .*SQLite or PostgreSQL/)
    assert.doesNotMatch(r.stderr, STACK_FRAME)
  })

  for (const args of [['audit', 'export'], ['audit', 'query', '--operation', 'op_pipe']]) {
    test(`warrant ${args.join(' ')} | head: the closed pipe ends the command quietly`, async () => {
      const r = await firstChunkThenClose([...args, '--config', ws.configPath], ws.dir)
      assert.ok(r.first.length > 0)
      assert.equal(r.code, 0, r.stderr)
      assert.equal(r.stderr, '')
    })
  }
})
