import type { Command } from 'commander'
import type { PlanProposal } from '../../plans/index.js'
import { cliActor, type TokenFlags, withPrincipalOptions } from '../cli-actor.js'
import { EXIT } from '../exit-status.js'
import { withCliGateway } from '../open-cli-gateway.js'
import { renderPlan, renderSelection } from '../render-selection.js'
import { registerReconcile } from './operation.js'

/**
 * What follows a selection or an operation that did not go as planned, the HTTP API's follow-ups from the
 * terminal: `recover` (POST /v1/selections/{id}/recover), `compensate` (POST /v1/operations/{id}/compensation)
 * and `reconcile` (POST /v1/operations/{id}/reconcile).
 */
export function registerFollowUps(program: Command): void {
  withPrincipalOptions(
    program
      .command('recover <selection_id>')
      .description('make the complete selection of exactly the records an incomplete selection returned (it can then be planned, approved and committed)'),
  )
    .option('--json', 'print exactly what POST /v1/selections/{id}/recover returns')
    .action(async (id: string, flags: TokenFlags & { config?: string; json?: boolean }) => {
      await withCliGateway(flags, async (gateway) => {
        const view = await gateway.selections.recover(await cliActor(gateway, flags), id)
        process.stdout.write(flags.json ? `${JSON.stringify(view, null, 2)}\n` : `${renderSelection(view)}\n`)
        if (!view.complete) process.exitCode = EXIT.incomplete
      })
    })

  withPrincipalOptions(
    program
      .command('compensate <operation_id>')
      .description("propose the plan that restores each target the operation changed (succeeded, or changed otherwise than approved) to its before-value; it is reviewed and approved like any plan"),
  )
    .option('--json', 'print exactly what POST /v1/operations/{id}/compensation returns')
    .action(async (id: string, flags: TokenFlags & { config?: string; json?: boolean }) => {
      await withCliGateway(flags, async (gateway) => {
        const plan = (await gateway.operations.proposeCompensation(await cliActor(gateway, flags), id)) as PlanProposal
        process.stdout.write(flags.json ? `${JSON.stringify(plan, null, 2)}\n` : `${renderPlan(plan)}\n`)
      })
    })

  registerReconcile(program.command('reconcile <operation_id>'))
}
