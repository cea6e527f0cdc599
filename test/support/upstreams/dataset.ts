/** One subscription-like record as the example upstreams keep it, before each gives it its own shape. */
export interface Subscription {
  id: string
  status: 'active' | 'past_due' | 'canceled'
  region: 'eu' | 'us' | 'apac'
  collection: 'active' | 'paused'
  tags: string[]
  owner: string
  amount_due: number
  /** Never declared to Warrant: a field only the upstream knows, which a write must not lose. */
  internal_note: string
  /** Nested and undeclared as well. */
  billing: { contact: string; address: { city: string; country: string } }
  version: number
}

const STATUSES = ['active', 'past_due', 'past_due', 'canceled'] as const
const REGIONS = ['eu', 'us', 'apac'] as const

/** `n` records, deterministic: ids sub_0001…, every 2nd/3rd past_due, some disputed or on legal hold. */
export function subscriptions(n: number): Subscription[] {
  return Array.from({ length: n }, (_, i) => {
    const tags = [i % 7 === 0 ? 'disputed' : '', i % 11 === 0 ? 'legal_hold' : '', i % 5 === 0 ? 'enterprise' : ''].filter(Boolean)
    return {
      id: `sub_${String(i + 1).padStart(4, '0')}`,
      status: STATUSES[i % STATUSES.length]!,
      region: REGIONS[i % REGIONS.length]!,
      collection: 'active',
      tags,
      owner: `owner${i % 13}@example.com`,
      amount_due: (i * 37) % 500,
      internal_note: `note ${i} \u00e9\u4e2d`,
      billing: { contact: `c${i}@example.com`, address: { city: `City ${i % 9}`, country: REGIONS[i % 3] === 'eu' ? 'FR' : 'US' } },
      version: 1,
    }
  })
}
