import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { thingsResourceConfig } from '../plans/support/odd-upstream.js'
import { newContext, screenshot, signIn } from './support.js'
import { thingsGatewayWithBrowser } from './things-support.js'

/**
 * The pages spell an unseen character as its code point: "zz" plus a zero-width space reads "zz[U+200B]". An id whose
 * own text is the eleven characters "zz[U+200B]" read the same, so two records drew as one id on the same page, and
 * no lookalike notice named them (their skeletons differ). A "[" that begins what reads as such a mark is itself
 * spelled, so the literal text can never be taken for the mark.
 */
describe('text that spells a code point mark does not read as the character it names (Chromium, an odd http upstream)', () => {
  const t = thingsGatewayWithBrowser(['things'], (c, origin) => {
    c.resources.things = thingsResourceConfig(origin)
  })

  test('an id holding a zero-width space and an id holding the text "[U+200B]" read differently', async () => {
    t.up.things.set('zz\u200b', { id: 'zz\u200b', name: 'invisible', status: 'open', note: 'n' })
    t.up.things.set('zz[U+200B]', { id: 'zz[U+200B]', name: 'spelled', status: 'open', note: 'a [u+202e] b' })
    const selection = await t.post('/v1/resources/things/selections', { filter: { status: 'open' } })
    const plan = await t.post(`/v1/selections/${selection.selection_id}/plans`, { action: { type: 'set_status', params: { status: 'closed' } } })
    const page = await (await newContext(t.browser)).newPage()
    await signIn(page, t.fx, 'reviewer', `/review/plans/${plan.plan_id}`)
    // a manifest row reads "#, id, name, ...": the id is the second cell of the row whose name is given
    const idOf = async (name: string) => (await page.locator('tr', { has: page.locator('td', { hasText: new RegExp(`^${name}$`) }) }).innerText()).split('\t')[1]!.trim()
    const invisible = await idOf('invisible')
    const spelled = await idOf('spelled')
    await screenshot(page, 'spelled-marks')
    assert.equal(invisible, 'zz[U+200B]')
    assert.notEqual(spelled, invisible, 'the two ids must not draw alike')
    assert.equal(spelled, 'zz[U+005B]U+200B]')
    // a lower-case spelling reads as a mark too
    assert.match(await page.locator('body').innerText(), /a \[U\+005B\]u\+202e\] b/)
  })
})
