import { startDemoGateway } from '../test/support/gateway-fixture.js'
import { caller, selectProposeApprove, waitForOperation } from '../test/operations/support/flow.js'
import { Session } from 'node:inspector/promises'
import { writeFileSync } from 'node:fs'
const kind = (process.argv[2] ?? 'sqlite') as any
const fx = await startDemoGateway({ store: kind, upstream: kind, count: 10000, edit: (raw) => { raw.execution = { ...(raw.execution ?? {}), concurrency: 16 } } })
const agent = fx.as('agent'); const reviewers = [fx.as('reviewer'), fx.as('reviewer2')]
const session = new Session(); session.connect()
for (let round = 1; round <= 4; round++) {
  const paused = round % 2 === 0
  const filter = paused ? { status: 'past_due', collection: 'paused' } : { status: 'past_due', collection: 'active' }
  const action = paused ? { type: 'resume_collection' } : { type: 'pause_collection', reason: `r${round}` }
  const { selection } = await selectProposeApprove(agent as any, reviewers as any, 'subscriptions', { filter }, action)
  if (round === 3) { await session.post('Profiler.enable'); await session.post('Profiler.start') }
  const t = performance.now()
  const commit = await agent('POST', '/v1/resources/subscriptions/bulk-actions', { selection_id: selection.selection_id, expected_digest: selection.digest, action }, { 'idempotency-key': `k${round}` })
  const op = await waitForOperation(agent as any, commit.body.operation_id, 600000)
  console.log(round, selection.count, op.state, JSON.stringify(op.counts), (performance.now() - t).toFixed(0), 'ms')
  if (round === 3) { const { profile } = await session.post('Profiler.stop'); writeFileSync('/tmp/inproc.cpuprofile', JSON.stringify(profile)) }
}
await fx.close()
