import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import { after, before, describe, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { Change, Val } from '../../src/ui/components.js'
import { scalarText } from '../../src/ui/format.js'
import { type GatewayFixture, startDemoGateway } from '../support/gateway-fixture.js'
import { createSelection, launchBrowser, newContext, proposePlan, signIn } from './support.js'

const html = async (node: unknown) => String(await (node as { toString(): string | Promise<string> }).toString())

describe('review pages: two different values never read the same', () => {
  test('each pair renders differently: one tag "a, b" and two tags; the text "100" and the number 100; absent and empty', async () => {
    assert.notEqual(scalarText(['a, b']), scalarText(['a', 'b']))
    assert.notEqual(scalarText('a, b'), scalarText(['a', 'b']))
    assert.notEqual(scalarText('100'), scalarText(100))
    assert.notEqual(scalarText('true'), scalarText(true))
    assert.notEqual(scalarText('1e+21'), scalarText(1e21))
    assert.notEqual(scalarText('{"a":1}'), scalarText({ a: 1 }))
    assert.notEqual(scalarText(undefined), scalarText(null))
    assert.notEqual(scalarText('absent'), scalarText(undefined))
    assert.notEqual(await html(Val({ value: undefined })), await html(Val({ value: null })))
    // an upstream's answer that lacks the field is not "already" the empty value it had
    assert.doesNotMatch(await html(Change({ field: 'owner', before: null, after: undefined })), /already/)
    assert.match(await html(Change({ field: 'owner', before: null, after: null })), /already/)
    // a number field's exact digits (an integer past 2^53 the sql connector keeps as read) are that number, not text
    assert.equal(scalarText('12345678901234567890', 'number'), '12345678901234567890')
    assert.equal(scalarText('12345678901234567890', 'string'), '"12345678901234567890" (text)')
  })

  describe('on a real gateway', () => {
    let fx: GatewayFixture
    let browser: Browser
    let ids: string[]
    before(async () => {
      fx = await startDemoGateway({ store: 'sqlite', count: 200 })
      browser = await launchBrowser()
      const db = new Database(fx.upstreamUrl.replace(/^sqlite:/, ''))
      try {
        ids = (db.prepare("select id from subscriptions where status = 'past_due' and collection = 'active' order by id limit 3").all() as { id: string }[]).map((r) => r.id)
        db.prepare('update subscriptions set tags = ?, owner = ?, amount_due = ? where id = ?').run('["a, b"]', '100', 100, ids[0])
        db.prepare('update subscriptions set tags = ?, owner = ?, amount_due = ? where id = ?').run('["a","b"]', 'o', 100, ids[1])
        // a double the column holds exactly as 0.1 + 0.2 gives it: shown with every digit, not rounded to 0.3
        db.prepare('update subscriptions set amount_due = ? where id = ?').run(0.1 + 0.2, ids[2])
      } finally {
        db.close()
      }
    })
    after(async () => {
      await browser?.close()
      await fx?.close()
    })

    test('the manifest shows one tag "a, b" apart from two tags, the text "100" apart from the number 100, and a number with all its digits', async () => {
      const selection = await createSelection(fx, { filter: { id: { in: ids } } })
      const plan = await proposePlan(fx, selection.selection_id, { type: 'pause_collection', params: { reason: '100' } })
      const page = await (await newContext(browser)).newPage()
      await signIn(page, fx, 'reviewer', `/review/plans/${plan.plan_id}`)
      await page.getByTestId('manifest').waitFor()
      const headers = await page.getByTestId('manifest').locator('thead th').allInnerTexts()
      const cell = (id: string, column: string) =>
        page.getByTestId('manifest').locator('tbody tr', { hasText: id }).locator('th, td').nth(headers.indexOf(column)).innerText()
      assert.ok(headers.includes('tags') && headers.includes('owner') && headers.includes('amount_due'), JSON.stringify(headers))
      const one = await cell(ids[0]!, 'tags')
      const two = await cell(ids[1]!, 'tags')
      assert.notEqual(one, two, `one tag "a, b" reads ${one}; the tags a and b read ${two}`)
      assert.equal(await cell(ids[0]!, 'owner'), '"100" (text)')
      assert.equal(await cell(ids[0]!, 'amount_due'), '100')
      assert.equal(await cell(ids[2]!, 'amount_due'), '0.30000000000000004')
      // what the plan writes: the text "100", never the number
      assert.match(await page.getByTestId('glance').innerText(), /pause_reason → "100" \(the agent's words\)/)
      assert.match(await page.getByTestId('uniform-summary').innerText(), /pause_reason → "100" \(the agent's words\)/)
      await page.context().close()
    })
  })
})
