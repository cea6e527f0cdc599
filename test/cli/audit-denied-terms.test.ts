import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { createStore } from '../../src/store/index.js'
import { createCliWorkspace } from '../support/cli-config.js'

/**
 * A `warrant` command's audit row keeps its options: `--filter notes=VALUE` (and `--exclude rule:notes~VALUE`) is a
 * string, so the denied field's value went into the log whole, where the HTTP trail stores the same filter with
 * `notes: "[redacted]"`. The demo denies `notes` and `card_token`.
 */
describe('a CLI filter term on a denied or secret field (real processes, sqlite)', () => {
  test('its audit row keeps the field and operator, never the value', async () => {
    const ws = await createCliWorkspace({ count: 5 })
    try {
      const runs = [
        ['search', 'subscriptions', '-f', 'notes=TOPSECRET1'],
        ['search', 'subscriptions', '-f', 'status=active', '-f', ' card_token != TOPSECRET2,TOPSECRET3'],
        ['select', 'subscriptions', '-f', 'status=active', '-x', 'r:notes~TOPSECRET4'],
        ['search', 'subscriptions', '-f', 'notes TOPSECRET5'],
        ['search', 'subscriptions', '-f', 'api_key=TOPSECRET6'],
      ]
      for (const args of runs) assert.equal((await ws.warrant(args)).code, 2, args.join(' '))
      const store = await createStore({ url: `sqlite:${join(ws.dir, 'warrant.db')}` })
      try {
        const rows = await store.db.selectFrom('audit_events').selectAll().where('surface', '=', 'cli').orderBy('seq').execute()
        assert.equal(rows.length, runs.length)
        assert.doesNotMatch(JSON.stringify(rows), /TOPSECRET/)
        const options = rows.map((r) => (JSON.parse(r.summary) as { options: { filter?: string[]; exclude?: string[] } }).options)
        assert.deepEqual(options[0]!.filter, ['notes=[redacted]'])
        assert.deepEqual(options[1]!.filter, ['status=active', ' card_token != [redacted]'])
        assert.deepEqual([options[2]!.filter, options[2]!.exclude], [['status=active'], ['r:notes~[redacted]']])
        assert.deepEqual(options[3]!.filter, ['notes [redacted]'])
      } finally {
        await store.close()
      }
    } finally {
      await ws.drop()
    }
  })

  /**
   * `warrant plan SEL -a ACTION -p NAME=VALUE`: each parameter is one string too, so `-p api_key=…` went into the
   * log whole where the HTTP trail stores the same parameter as `api_key: "[redacted]"` (and a denied field's name
   * the same way).
   */
  test('an action parameter named as a secret or a denied field keeps its name, never its value', async () => {
    const ws = await createCliWorkspace({ count: 5 })
    try {
      const args = ['plan', 'sel_missing', '-a', 'pause_collection', '-p', 'reason=kept', '-p', 'api_key=TOPSECRET7', '-p', 'notes=TOPSECRET8', '-p', 'Card_Token = TOPSECRET9']
      assert.notEqual((await ws.warrant(args)).code, 0)
      const store = await createStore({ url: `sqlite:${join(ws.dir, 'warrant.db')}` })
      try {
        const rows = await store.db.selectFrom('audit_events').selectAll().where('action', '=', 'cli:plan').execute()
        assert.equal(rows.length, 1)
        assert.doesNotMatch(JSON.stringify(rows), /TOPSECRET/)
        const options = (JSON.parse(rows[0]!.summary) as { options: { param?: string[] } }).options
        assert.deepEqual(options.param, ['reason=kept', 'api_key=[redacted]', 'notes=[redacted]', 'Card_Token = [redacted]'])
      } finally {
        await store.close()
      }
    } finally {
      await ws.drop()
    }
  })
})
