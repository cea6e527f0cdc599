import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseRetryAfter } from '../../../src/connectors/http/retry-after.js'

/**
 * Retry-After is delay-seconds or an HTTP-date (RFC 9110 §10.2.3, §5.6.7: IMF-fixdate, or the obsolete RFC 850
 * and asctime forms). Anything with a letter was handed to Date.parse, which reads nearly any text with a
 * number in it as a date: `soon 5` was 1 May 2001 (0 s, retried at once until the retries ran out), `x 2030`
 * was 1 January 2030 (a pause of years, named as what the upstream asked for). Only the three forms are dates.
 */
describe('parseRetryAfter: delay-seconds or one of the three HTTP-date forms, nothing else', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:27:00 GMT')

  it('reads the three HTTP-date forms', () => {
    assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', now), 60)
    assert.equal(parseRetryAfter('Wednesday, 21-Oct-15 07:29:00 GMT', now), 120)
    assert.equal(parseRetryAfter('Wed Oct 21 07:30:00 2015', now), 180)
    assert.equal(parseRetryAfter('Wed Oct  1 07:30:00 2015', now), 0, 'a date in the past is 0')
    assert.equal(parseRetryAfter(' 120 ', now), 120)
  })

  it('anything else is unusable (null), never a date Date.parse guessed', () => {
    for (const text of ['soon 5', 'x 2030', 'Retry 12', 'in 2 hours', '1.5', '-5', '1e3', '0x10', '', 'Wed, 31 Feb 2015 07:28:00 GMT', 'Wed, 21 Oct 2015 25:28:00 GMT', 'Wed, 21 Oct 2015 07:28:00 PST'])
      assert.equal(parseRetryAfter(text, now), null, JSON.stringify(text))
  })
})
