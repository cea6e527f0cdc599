import { canonicalJson, surelySameJson } from '../contract/index.js'
import { callContext } from '../connectors/index.js'
import type { OperationTargetRow } from '../store/index.js'
import { NO_TELEMETRY } from '../telemetry/index.js'
import { settle } from './settle-attempt.js'
import { callContextOf, judge, LEASE_ENDED, leaseHolds, prepare, type Attempt, type PreparedWrite, type Reread, type Sent, type StepResult, type TargetContext } from './target-step.js'

/**
 * A window of targets already claimed `in_flight`, written together where the connector can (`writeWindow`):
 * each target is checked as it would be alone, those to write that share the same change go upstream as one
 * statement, and each answer is judged and recorded for its own target. The results are in the targets'
 * order. Used only where the write enforces the version, so each `read` (the window's read) is as good as a
 * re-read alone.
 */
export async function executeWindow(ctx: TargetContext, targets: readonly { readonly target: OperationTargetRow; readonly read?: Reread }[]): Promise<StepResult[]> {
  const { plan, selection } = ctx.execution
  const telemetry = ctx.telemetry ?? NO_TELEMETRY
  const attributes = {
    'warrant.operation_id': ctx.operationId,
    'warrant.plan_id': plan.plan_id,
    'warrant.selection_digest': selection.digest,
    'warrant.resource': plan.resource,
    'warrant.window.targets': targets.length,
  }
  telemetry.add('warrant_executor_targets_in_flight', {}, targets.length)
  let steps: Attempt[]
  try {
    steps = await callContext.run(callContextOf(ctx), () =>
      telemetry.span('warrant.window.write', attributes, async () => {
        const prepared: (Attempt | PreparedWrite)[] = []
        for (const { target, read } of targets) prepared.push(await prepare(ctx, target, read))
        const sent = new Map<number, Sent>()
        // asked before each statement: the window's reads and earlier statements may have outlasted the lease's margin
        const unsent = new Set<number>()
        // targets that set the same values under the same precondition go as one statement (a compensation's
        // targets each restore their own values, so each goes alone)
        const groups = new Map<string, number[]>()
        // a target's change is first compared with the one before it (in a window they are mostly the same), and
        // serialised only when it differs: surelySameJson is true only where the canonical texts are the same
        let last: { readonly key: string; readonly change: object } | null = null
        prepared.forEach((p, i) => {
          if (p.kind !== 'write') return
          const change = { set: p.request.set, precondition: p.request.precondition, http: p.request.http ?? null, restores: p.request.restores ?? null }
          const key = last !== null && surelySameJson(change, last.change) ? last.key : canonicalJson(change)
          last = { key, change }
          const group = groups.get(key)
          if (group) group.push(i)
          else groups.set(key, [i])
        })
        for (const indexes of groups.values()) {
          const requests = indexes.map((i) => (prepared[i] as PreparedWrite).request)
          if (!leaseHolds(ctx)) {
            for (const i of indexes) unsent.add(i)
            continue
          }
          if (requests.length > 1 && ctx.connector.writeWindow) {
            try {
              const outcomes = await ctx.connector.writeWindow(requests)
              // each target's answer is its own: one whose own step threw is that target's error, never the window's
              indexes.forEach((i, k) => {
                const answer = outcomes[k]
                sent.set(i, answer === undefined ? { error: new Error('the connector gave no answer for this write') } : answer.kind === 'threw' ? { error: answer.error } : { outcome: answer })
              })
            } catch (error) {
              for (const i of indexes) sent.set(i, { error })
            }
            continue
          }
          for (const i of indexes) {
            if (!leaseHolds(ctx)) {
              unsent.add(i)
              continue
            }
            try {
              sent.set(i, { outcome: await ctx.connector.write((prepared[i] as PreparedWrite).request) })
            } catch (error) {
              sent.set(i, { error })
            }
          }
        }
        const out: Attempt[] = []
        for (const [i, p] of prepared.entries()) out.push(p.kind !== 'write' ? p : unsent.has(i) ? LEASE_ENDED : await judge(ctx, p, sent.get(i)!))
        telemetry.annotate({ 'warrant.window.written': sent.size })
        return out
      }),
    )
  } finally {
    telemetry.add('warrant_executor_targets_in_flight', {}, -targets.length)
  }
  return targets.map(({ target }, i) => settle(ctx, target, steps[i]!))
}
