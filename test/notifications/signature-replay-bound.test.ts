import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { test } from 'node:test'
import { verifySignature } from '../../src/notifications/index.js'

const SECRET = 'whsec-replay-0123456789'
const BODY = '{"event":"plan.decided","delivery_id":"whd_1"}'
/** A delivery signed in 1970: long past any tolerance, a replay. */
const OLD_TIMESTAMP = '1'
const signed = (timestamp: string) => `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${BODY}`).digest('hex')}`

/**
 * `verifySignature` bounds the timestamp (a replay of a captured delivery is refused). A receiver that hands it a
 * `now` or a tolerance it could not read (`new Date(header)` of a missing header, `Number(process.env.X)` of an unset
 * variable) gave it NaN, and every comparison with NaN is false: the bound never refused, and a delivery from 1970
 * verified. It now refuses whenever it cannot show the timestamp is within the tolerance.
 */
test('a timestamp bound that cannot be judged (NaN now or tolerance) refuses, never accepts a replay', () => {
  const replay = { secret: SECRET, body: BODY, timestamp: OLD_TIMESTAMP, signature: signed(OLD_TIMESTAMP) }
  assert.equal(verifySignature(replay), false, 'a replay, judged on the real clock')
  assert.equal(verifySignature({ ...replay, now: new Date('not a date') }), false, 'an invalid now')
  assert.equal(verifySignature({ ...replay, toleranceSeconds: Number(undefined) }), false, 'a NaN tolerance')
  const fresh = String(Math.floor(Date.now() / 1000))
  assert.equal(verifySignature({ secret: SECRET, body: BODY, timestamp: fresh, signature: signed(fresh) }), true, 'a fresh delivery still verifies')
  assert.equal(verifySignature({ secret: SECRET, body: BODY, timestamp: fresh, signature: signed(fresh), toleranceSeconds: Number.NaN }), false, 'no bound, no verdict')
})
