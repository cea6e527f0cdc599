import assert from 'node:assert/strict'
import { call } from '../../support/gateway-fixture.js'

/** JSON over HTTP as one bearer token. */
export type Caller = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: any; headers: Headers }>

export function caller(base: string, token: string): Caller {
  return (method, path, body, headers = {}) => call(base, method, path, body, { authorization: `Bearer ${token}`, ...headers })
}

export interface ApprovedChange {
  readonly selection: any
  readonly plan: any
}

/** select → propose → approve, over HTTP, asserting each step; returns the selection view and the plan. */
export async function selectProposeApprove(
  agent: Caller,
  reviewers: readonly Caller[],
  resource: string,
  request: { readonly filter: unknown; readonly exclude?: unknown; readonly fields?: readonly string[]; readonly page_size?: number },
  action: Record<string, unknown>,
): Promise<ApprovedChange> {
  const selection = await agent('POST', `/v1/resources/${resource}/selections`, request)
  assert.equal(selection.status, 201, JSON.stringify(selection.body))
  assert.equal(selection.body.complete, true)
  const plan = await agent('POST', `/v1/selections/${selection.body.selection_id}/plans`, { action })
  assert.ok(plan.status === 201 || plan.status === 200, JSON.stringify(plan.body))
  for (const reviewer of reviewers.slice(0, Math.max(1, plan.body.approval.reviewers_needed))) {
    const approval = await reviewer('POST', `/v1/plans/${plan.body.plan_id}/approvals`, { decision: 'approve', expected_plan_digest: plan.body.plan_digest, comment: 'looked at every record' })
    assert.equal(approval.status, 201, JSON.stringify(approval.body))
  }
  return { selection: selection.body, plan: plan.body }
}

const FINISHED = new Set(['succeeded', 'completed_with_skips', 'completed_with_unknown', 'partially_failed', 'failed', 'halted'])

/** Polls GET /v1/operations/{id} until the operation is finished. */
export async function waitForOperation(as: Caller, operationId: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const res = await as('GET', `/v1/operations/${operationId}`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    if (FINISHED.has(res.body.state)) return res.body
    if (Date.now() > deadline) assert.fail(`operation ${operationId} did not finish in ${timeoutMs} ms: ${JSON.stringify(res.body)}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Every per-target result, following next_cursor. */
export async function allResults(as: Caller, operationId: string, outcome?: string): Promise<any[]> {
  const out: any[] = []
  let cursor: string | null = null
  do {
    const query = new URLSearchParams({ limit: '1000', ...(outcome ? { outcome } : {}), ...(cursor ? { cursor } : {}) })
    const res = await as('GET', `/v1/operations/${operationId}/results?${query}`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    out.push(...res.body.results)
    cursor = res.body.next_cursor
  } while (cursor)
  return out
}
