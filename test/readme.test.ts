import assert from 'node:assert/strict'
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { parse as parseYaml } from 'yaml'
import { parseConfig } from '../src/config/index.js'
import { ERROR_STATUS, exitCodeOf, type ErrorCode } from '../src/contract/index.js'
import { ensureDemoData } from '../src/demo/index.js'
import { CLI_ENTRY, TSX_LOADER } from './support/cli-config.js'
import { createTempDir } from './support/stores.js'

const run = promisify(execFile)
const ROOT = new URL('..', import.meta.url).pathname
const MARK = '<!-- readme-test: run -->'
/** Marks a yaml or json block that is not a Warrant config (another tool's file): every other one must load. */
const NOT_CONFIG = '<!-- readme-test: not-a-warrant-config -->'
/** The placeholders the README names and the test fills in: assignments of them are not run, they are given. */
const GIVEN = /^(BASE|AGENT|REVIEWER|TOKEN)=/
const IDS = ['PLAN_DIGEST', 'SEL', 'PLAN', 'OP'] as const
type Ids = Partial<Record<(typeof IDS)[number], string>>

/** The README's runnable blocks, in order, as commands: continued lines and open quotes joined, comments dropped. */
export function readmeCommands(markdown: string): { command: string; note: string | null }[] {
  const commands: { command: string; note: string | null }[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i += 1) {
    if (lines[i]!.trim() !== MARK) continue
    assert.match(lines[i + 1]!, /^```sh$/, `a ${MARK} mark must precede a sh block (line ${i + 2})`)
    let pending = ''
    for (i += 2; lines[i] !== '```'; i += 1) {
      const line = lines[i]!
      if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) continue
      pending += (pending ? '\n' : '') + line
      if (line.endsWith('\\') || openQuote(pending)) continue
      const split = splitNote(pending)
      commands.push(split)
      pending = ''
    }
  }
  return commands
}

/** Whether a single or double quote is still open at the end of `text` (enough for the README's shell). */
function openQuote(text: string): boolean {
  let quote: string | null = null
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = null
    } else if (c === "'" || c === '"') quote = c
    else if (c === '#') break
  }
  return quote !== null
}

/** A command and its trailing `# note`, split at the first `#` outside quotes that follows a space. */
function splitNote(text: string): { command: string; note: string | null } {
  let quote: string | null = null
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!
    if (quote) {
      if (c === quote) quote = null
    } else if (c === "'" || c === '"') quote = c
    else if (c === '#' && /\s/.test(text[i - 1] ?? '')) return { command: text.slice(0, i).trimEnd(), note: text.slice(i + 1).trim() }
  }
  return { command: text, note: null }
}

describe('the README examples run as printed, in order, on a fresh store', () => {
  let dir: Awaited<ReturnType<typeof createTempDir>>
  let server: ChildProcess | null = null
  let tryLine = ''
  const env: Record<string, string> = {}
  before(async () => {
    dir = await createTempDir('warrant-readme-')
    const raw = parseYaml(readFileSync(join(ROOT, 'config/demo.yaml'), 'utf8')) as Record<string, any>
    raw.store = `sqlite:${join(dir.path, 'warrant.db')}`
    raw.resources.subscriptions.connector.url = `sqlite:${join(dir.path, 'demo.db')}`
    const config = join(dir.path, 'warrant.json')
    writeFileSync(config, JSON.stringify(raw))
    await ensureDemoData({ url: `sqlite:${join(dir.path, 'demo.db')}` })
    // `warrant …` in the README is `npm run -s warrant -- …`: the same entry point, without npm's start-up.
    mkdirSync(join(dir.path, 'bin'))
    writeFileSync(join(dir.path, 'bin/warrant'), `#!/bin/sh\nexec "${process.execPath}" --import "${TSX_LOADER}" "${CLI_ENTRY}" "$@"\n`)
    chmodSync(join(dir.path, 'bin/warrant'), 0o755)
    Object.assign(env, { PATH: `${join(dir.path, 'bin')}:${process.env.PATH}`, WARRANT_CONFIG: config, WARRANT_LOG_LEVEL: 'silent', WARRANT_PROGRESS_INTERVAL_MS: '60000' })

    // `npm start`, on a free port: its printed address and first tokens are the README's BASE, AGENT and REVIEWER.
    server = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'serve', '--port', '0'], { cwd: dir.path, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let printed = ''
    await new Promise<void>((resolve, reject) => {
      server!.stdout!.on('data', (chunk: Buffer) => {
        printed += chunk.toString()
        if (/agent: +\S+/.test(printed) && /Try:/.test(printed)) resolve()
      })
      server!.once('exit', (code) => reject(new Error(`serve exited ${code}: ${printed}`)))
    })
    env.BASE = /API: +(http:\/\/127\.0\.0\.1:\d+)\/v1\/resources/.exec(printed)![1]!
    env.AGENT = /agent: +(\S+)/.exec(printed)![1]!
    env.REVIEWER = /reviewer: +(\S+)/.exec(printed)![1]!
    tryLine = /^Try: (.*)$/m.exec(printed)![1]!
  })
  after(async () => {
    server?.kill('SIGTERM')
    if (server && server.exitCode === null) await new Promise((resolve) => server!.once('exit', resolve))
    await dir?.drop()
  })

  // `npm start` ends with a `Try:` command: pasted as printed into a fresh shell (no variable set), it must answer.
  test('the Try line npm start prints runs as printed', async () => {
    const { stdout } = await run('bash', ['-c', tryLine], { cwd: dir.path, env: { PATH: process.env.PATH ?? '' } })
    assert.match(stdout, /"complete":false/, `${tryLine}\n${stdout.slice(0, 500)}`)
  })

  test('every marked command exits as documented and prints what its note says', { timeout: 900_000 }, async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const commands = readmeCommands(readme)
    assert.ok(commands.length >= 10, `found ${commands.length} runnable commands`)
    const ids: Ids = {}
    for (const { command, note } of commands) {
      if (GIVEN.test(command)) continue
      // CLI commands name ids as bare words, HTTP ones as shell variables: both are the ids last printed.
      let shell = command
      for (const name of IDS) if (ids[name]) shell = shell.replace(new RegExp(`(?<![$\\w])${name}(?!\\w)`, 'g'), ids[name]!)
      const expected = note?.startsWith('→') ? note.slice(1).trim() : null
      const status = Number(/\(exit (\d)\)$/.exec(expected ?? '')?.[1] ?? 0)
      const text = expected?.replace(/\s*\(exit \d\)$/, '') ?? null
      let out = { code: 0, stdout: '', stderr: '' }
      try {
        const { stdout, stderr } = await run('bash', ['-c', shell], { cwd: dir.path, env: { ...process.env, ...env, ...ids }, maxBuffer: 64 * 1024 * 1024 })
        out = { code: 0, stdout, stderr }
      } catch (error) {
        const e = error as { code?: number; stdout?: string; stderr?: string }
        out = { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
      }
      assert.equal(out.code, status, `${command}\nexit ${out.code}\n${out.stderr}\n${out.stdout.slice(0, 2000)}`)
      if (text) assert.ok(out.stdout.includes(text), `${command}\nexpected to print: ${text}\n${out.stdout.slice(0, 2000)}`)
      assert.doesNotMatch(out.stdout, /"error":\{"code"/, command)
      Object.assign(ids, idsIn(out.stdout))
    }
    assert.ok(ids.OP, 'the README ran an operation')
  })
})

/** The ids a command printed, as JSON (HTTP) or as the CLI words them. */
function idsIn(stdout: string): Ids {
  const found: Ids = {}
  try {
    const body = JSON.parse(stdout) as Record<string, unknown>
    if (typeof body.selection_id === 'string') found.SEL = body.selection_id
    if (typeof body.plan_id === 'string') found.PLAN = body.plan_id
    if (typeof body.plan_digest === 'string') found.PLAN_DIGEST = body.plan_digest
    if (typeof body.operation_id === 'string') found.OP = body.operation_id
    return found
  } catch {
    // not JSON: the CLI's words
  }
  const sel = /^COMPLETE: selection (sel_\w+)/m.exec(stdout)
  if (sel) found.SEL = sel[1]!
  const plan = /^PLAN (plan_\S+) /m.exec(stdout)
  if (plan) found.PLAN = plan[1]!
  const digest = /^ {2}plan digest: +(sha256:[0-9a-f]+)/m.exec(stdout)
  if (digest) found.PLAN_DIGEST = digest[1]!
  const op = /operation (op_[\w-]+)/.exec(stdout)
  if (op) found.OP = op[1]!
  return found
}

/** The README's yaml and json blocks, each with the line it starts on, but those marked as another tool's file. */
export function readmeConfigBlocks(markdown: string): { line: number; lang: string; text: string }[] {
  const blocks: { line: number; lang: string; text: string }[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^\s*```(yaml|yml|json)\s*$/.exec(lines[i]!)
    if (!open) continue
    const marked = lines.slice(Math.max(0, i - 2), i).some((l) => l.trim() === NOT_CONFIG)
    const start = i
    const body: string[] = []
    for (i += 1; !/^\s*```\s*$/.test(lines[i]!); i += 1) body.push(lines[i]!)
    if (!marked) blocks.push({ line: start + 1, lang: open[1]!, text: body.join('\n') })
  }
  return blocks
}

/** `over` laid onto `base`, key by key (a fragment of a config shown in the README, over the demo's). */
function overlay(base: unknown, over: unknown): unknown {
  if (typeof base !== 'object' || base === null || Array.isArray(base) || typeof over !== 'object' || over === null || Array.isArray(over)) return over
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) }
  for (const [k, v] of Object.entries(over)) out[k] = overlay(out[k], v)
  return out
}

// A newcomer copies a config example from the README into their file: each must load as printed. A fragment
// (the keys one section is about) is laid over the demo config, as a reader adds it to theirs.
describe('every config example in the README loads', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const demo = parseYaml(readFileSync(join(ROOT, 'config/demo.yaml'), 'utf8')) as unknown
  const blocks = readmeConfigBlocks(readme)
  test('the README shows config examples', () => assert.ok(blocks.length >= 3, `found ${blocks.length}`))
  for (const block of blocks)
    test(`the ${block.lang} block at README.md line ${block.line}`, () => {
      const fragment = block.lang === 'json' ? (JSON.parse(block.text) as unknown) : (parseYaml(block.text) as unknown)
      assert.ok(typeof fragment === 'object' && fragment !== null, 'a config example is a mapping')
      assert.doesNotThrow(() => parseConfig(overlay(demo, fragment), `README.md line ${block.line}`))
    })

  // an MCP client starts the server from its own working directory, often the home folder: `npx warrant` there is
  // whatever package the npm registry holds under that name (handed the agent token), and in the clone it first
  // rebuilds dist/ for a minute, past the client's time limit
  test("the MCP client config runs this repository's CLI by its path", () => {
    const line = /`(\{"command": [^`]*\})`/.exec(readme.slice(readme.indexOf('## Agents (MCP)')))
    assert.ok(line, 'the README shows an MCP client config')
    const config = JSON.parse(line[1]!) as { command: string; args: string[]; env: Record<string, string> }
    assert.equal(config.command, 'node', line[1])
    assert.match(config.args[0]!, /^\/path\/to\/warrant\/bin\/warrant\.js$/, 'an absolute path to bin/warrant.js')
    assert.deepEqual(config.args.slice(1, 3), ['mcp', '--config'])
    assert.ok(config.args[3]!.startsWith('/'), 'an absolute config path: the client chooses the working directory')
    assert.ok(!('WARRANT_TOKEN' in config.env) || config.env.WARRANT_TOKEN!.startsWith('wrt_agent_'))
  })
})

// A code the gateway answers that the README's table leaves out is a refusal a reader cannot look up (headers_too_large,
// unsupported_media_type, method_not_allowed and store_unavailable were answered long before any table named them):
// the table names every code of src/contract/errors.ts once, with its HTTP status and CLI exit as the code maps them.
describe("the README's error-code table", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const table = readme.slice(readme.indexOf('| code | HTTP | MCP | CLI exit |'))
  const rows = new Map<string, { http: number; exit: number }>()
  for (const line of table.split('\n').slice(2)) {
    const row = /^\| `([a-z_]+)` \| (\d{3}) \| [^|]+ \| (\d) \|/.exec(line)
    if (!row) break
    assert.ok(!rows.has(row[1]!), `${row[1]} is in the table twice`)
    rows.set(row[1]!, { http: Number(row[2]), exit: Number(row[3]) })
  }
  test('names every code the gateway answers, with its HTTP status and CLI exit', () => {
    assert.ok(readme.includes('| code | HTTP | MCP | CLI exit |'), 'the README has an error-code table')
    for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
      assert.ok(rows.has(code), `the README's error-code table lacks ${code}`)
      assert.deepEqual(rows.get(code), { http: ERROR_STATUS[code], exit: exitCodeOf(code) }, code)
    }
    assert.deepEqual([...rows.keys()].filter((code) => !(code in ERROR_STATUS)), [], 'no code the gateway never answers')
  })
})
