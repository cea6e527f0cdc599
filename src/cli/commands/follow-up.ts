import type { Command } from 'commander'
import type { Actor } from '../../contract/index.js'
import type { Gateway } from '../../gateway/index.js'
import type { PlanProposal } from '../../plans/index.js'
import { cliActor, type TokenFlags, withPrincipalOptions } from '../cli-actor.js'
import { noteCliAnswer } from '../cli-audit.js'
import { EXIT } from '../exit-status.js'
import { onInterrupt } from '../interrupt.js'
import { createProgress, freezeProgressLine } from '../progress.js'
import type { FreezeProgress } from '../../selections/index.js'
import { withCliGateway } from '../open-cli-gateway.js'
import { renderPlan, renderSelection } from '../render-selection.js'
import { registerReconcile } from './operation.js'
import { reachLines, underHeadline } from '../render-reach.js'

/**
 * What follows a selection or an operation that did not go as planned, the HTTP API's follow-ups from the
 * terminal: `recover` (POST /v1/selections/{id}/recover), `compensate` (POST /v1/operations/{id}/compensation), `remainder` (POST /v1/operations/{id}/remainder)
 * and `reconcile` (POST /v1/operations/{id}/reconcile).
 */
export function registerFollowUps(program: Command): void {
  withPrincipalOptions(
    program
      .command('recover <selection_id>')
      .description('make the complete selection of exactly the records an incomplete selection returned (it can then be planned, approved and committed)'),
  )
    .option('--json', 'print exactly what POST /v1/selections/{id}/recover returns')
    .option('-q, --quiet', 'no progress line on stderr')
    .action(async (id: string, flags: TokenFlags & { config?: string; json?: boolean; quiet?: boolean }) => {
      await withCliGateway(flags, async (gateway) => {
        const actor = await cliActor(gateway, flags)
        // its walk can be as long as the selection's own: the same progress line as `warrant select` (stderr)
        const progress = createProgress({ quiet: flags.quiet })
        const started = Date.now()
        const resource = (await gateway.selections.load(actor, id)).resource
        // first heard as the walk starts: a recovery already made is handed back without one, and says nothing of pages
        const onProgress = (p: FreezeProgress) => progress.update(freezeProgressLine(`recovering ${id} from ${resource}`, p, Date.now() - started))
        // Ctrl-C: the walk stops and removes the recovery it was building, as `warrant select` does (only this one:
        // another gateway may be building its own). Left `building`, its row and members would stay forever.
        const stop = new AbortController()
        const recovering = gateway.selections.recover(actor, id, { onProgress, signal: stop.signal })
        const forget = onInterrupt(async (reason) => {
          stop.abort(reason)
          // frozen by this call just before the signal: no one was given its id, so it goes too (unless a plan names
          // it). An earlier recovery handed back (created: false) is an answer someone already has: it stays.
          const view = await recovering.catch(() => null)
          if (view?.created) await gateway.selections.discardUnused(view.selection_id)
        })
        const view = await recovering.finally(() => {
          forget()
          progress.done()
        })
        // interrupted while the view was read: the cleanup removes it, so its id must not be printed as an answer
        stop.signal.throwIfAborted()
        noteCliAnswer({ selection_id: view.selection_id })
        process.stdout.write(flags.json ? `${JSON.stringify(view, null, 2)}\n` : `${underHeadline(renderSelection(view), reachLines(gateway.config.resources[view.resource]))}\n`)
        if (!view.complete) process.exitCode = EXIT.incomplete
      })
    })

  const fromOperation = [
    {
      command: 'compensate <operation_id>',
      description:
        'propose the plan that restores each target the operation changed (succeeded, or changed otherwise than approved) to its before-value; it is reviewed and approved like any plan',
      route: 'compensation',
      propose: (gateway: Gateway, actor: Actor, id: string) => gateway.operations.proposeCompensation(actor, id),
    },
    {
      command: 'remainder <operation_id>',
      description:
        'propose the rest of a finished (halted) operation: a plan of the same action over exactly its pending targets at their frozen versions (the rest of a compensation: its inverse writes, the recorded before-values, on the targets it did not finish); it is reviewed and approved like any plan, then committed under a new key',
      route: 'remainder',
      propose: (gateway: Gateway, actor: Actor, id: string) => gateway.operations.proposeRemainder(actor, id),
    },
  ]
  for (const spec of fromOperation)
    withPrincipalOptions(program.command(spec.command).description(spec.description))
      .option('--json', `print exactly what POST /v1/operations/{id}/${spec.route} returns`)
      .action(async (id: string, flags: TokenFlags & { config?: string; json?: boolean }) => {
        await withCliGateway(flags, async (gateway) => {
          const plan = (await spec.propose(gateway, await cliActor(gateway, flags), id)) as PlanProposal
          noteCliAnswer({ plan_id: plan.plan_id, selection_id: plan.selection_id })
          process.stdout.write(flags.json ? `${JSON.stringify(plan, null, 2)}\n` : `${underHeadline(renderPlan(plan), reachLines(gateway.config.resources[plan.resource]))}\n`)
        })
      })

  registerReconcile(program.command('reconcile <operation_id>'))
}
