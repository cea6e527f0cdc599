import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type OddUpstream, startOddUpstream, thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { type CliWorkspace, createCliWorkspace } from '../support/cli-config.js'

/** Pairs of different ids: each a character the terminal cannot show, and the text of the escape the CLI prints for it. */
const IDS = ['zz\u200b', 'zz\\u200b', 'nl\nx', 'nl\\nx', 'esc\u001b[2Jx', 'esc\\u001b[2Jx', 'link\u001b]8;;http://evil.example/\u0007here\u001b]8;;\u0007']

/**
 * The CLI spells an unseen character as an escape: "zz" plus a zero-width space prints `zz\u200b`. An id whose own
 * text is the eight characters `zz\u200b` printed the same, so two records drew as one id in the terminal. A "\" that
 * opens what reads as an escape is escaped in turn; and no control character (ESC of a terminal sequence, an OSC 8
 * hyperlink) reaches the terminal raw.
 */
describe('warrant search / select: an id spelling an escape never prints as the character it names (real process, odd http upstream)', () => {
  let upstream: OddUpstream
  let ws: CliWorkspace
  before(async () => {
    upstream = await startOddUpstream(IDS.map((id, i) => ({ id, name: `n${i}`, status: 'open', note: 'n' })))
    ws = await createCliWorkspace({ count: 5, edit: (raw) => void (raw.resources.things = thingsResourceConfig(upstream.origin)) })
  })
  after(async () => {
    await ws?.drop()
    await upstream?.close()
  })

  for (const command of ['search', 'select']) {
    test(`warrant ${command}`, { timeout: 120_000 }, async () => {
      const run = await ws.warrant([command, 'things', '--filter', 'status=open', ...(command === 'select' ? ['-q'] : [])])
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
      assert.doesNotMatch(run.stdout, /[\u0000-\u0009\u000b-\u001f\u007f\u200b]/, 'no control or unseen character is written raw')
      // the id cell of the row whose name is given
      const idOf = (name: string) => run.stdout.split('\n').find((l) => new RegExp(`\\s${name}(\\s|$)`).test(l))?.trim().split(/\s{2,}/)[0]
      assert.equal(idOf('n0'), 'zz\\u200b', run.stdout)
      assert.equal(idOf('n1'), 'zz\\u005cu200b', run.stdout)
      assert.equal(idOf('n2'), 'nl\\nx', run.stdout)
      assert.equal(idOf('n3'), 'nl\\u005cnx', run.stdout)
      assert.equal(idOf('n4'), 'esc\\u001b[2Jx', run.stdout)
      assert.equal(idOf('n5'), 'esc\\u005cu001b[2Jx', run.stdout)
      const ids = IDS.map((_, i) => idOf(`n${i}`))
      assert.equal(new Set(ids).size, IDS.length, `every id draws apart: ${ids.join(' | ')}`)
    })
  }

  test('warrant select: the selector line writes a filter value\'s unseen character as an escape, never raw', { timeout: 120_000 }, async () => {
    const run = await ws.warrant(['select', 'things', '-q', '--filter', 'id=zz\u200b'])
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
    const selector = run.stdout.split('\n').find((l) => l.includes('selector:'))
    assert.ok(selector, run.stdout)
    assert.doesNotMatch(selector, /\u200b/, selector)
    assert.match(selector, /zz\\u200b/, selector)
  })
})
