import assert from 'node:assert/strict'
import { startThingsGateway, type Thing } from '../plans/support/odd-upstream.js'
import type { StoreKind } from '../support/stores.js'

/**
 * An export far larger than the sockets buffer, on the odd HTTP upstream (not the demo): 4,000 members of ~6 KB each,
 * string ids with commas, quotes and line breaks, so it spans four store pages and a client that stops reading holds
 * the gateway mid-file.
 */
export const WIDE_COUNT = 4000
const PAD = 'ж'.repeat(3000)
const thing = (i: number): Thing => ({ id: `t,"${String(i).padStart(5, '0')}"\n`, name: `${i} ${PAD}`, status: 'open', note: 'n' })

/** A served things gateway (`edit` changes its config) with one frozen selection of all WIDE_COUNT members; `close()` stops it all. */
export async function startWideExport(kind: StoreKind, edit?: (raw: Record<string, any>) => void) {
  const things = await startThingsGateway(Array.from({ length: WIDE_COUNT - 7 }, (_, i) => thing(i)), kind, edit)
  try {
    const res = await fetch(`${things.fx.base}/v1/resources/things/selections`, { method: 'POST', headers: { authorization: `Bearer ${things.token}`, 'content-type': 'application/json' }, body: '{}' })
    const sel = (await res.json()) as any
    assert.equal(res.status, 201, JSON.stringify(sel).slice(0, 500))
    assert.equal(sel.count, WIDE_COUNT)
    return { ...things, selectionId: sel.selection_id as string, digest: sel.digest as string }
  } catch (error) {
    await things.close()
    throw error
  }
}
