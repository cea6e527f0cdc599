import type { Command } from 'commander'
import { WarrantError } from '../../contract/index.js'
import { TOKEN_OPTIONS, tokenFrom, type TokenFlags } from '../cli-actor.js'
import { openCliGateway } from '../open-cli-gateway.js'
import { noteCliDetails } from '../cli-audit.js'
import { cellText } from '../table-cell.js'

/**
 * `warrant approve PLAN_ID --digest D`: a reviewer's decision from the terminal. The CLI has the store, but an
 * approval is still a reviewer's or an admin's: it needs that principal's token, authenticated like any HTTP
 * call. A principal's name alone is not a credential, so `--principal` is refused.
 */
export function registerApprove(program: Command): void {
  const command = program
    .command('approve <plan_id>')
    .description("approve (or --reject) the exact plan digest you reviewed, as the reviewer whose token you give")
    .requiredOption('-d, --digest <plan_digest>', 'the plan_digest you reviewed; another one is refused (digest_mismatch)')
    .option('--reject', 'reject the plan instead')
    .option('-m, --comment <text>', 'why')
    .option('--principal <name>', 'refused: a name is not a credential; give the reviewer token instead')
    .option('-c, --config <file>', 'config file')
    .option('--json', 'print exactly what POST /v1/plans/{id}/approvals returns')
  for (const [flag, help] of TOKEN_OPTIONS) command.option(flag, help)
  command.action(async (planId: string, flags: TokenFlags & { digest: string; reject?: boolean; comment?: string; principal?: string; config?: string; json?: boolean }) => {
    if (flags.principal !== undefined)
      throw new WarrantError('unauthenticated', '--principal is not accepted: an approval is made with the reviewer\'s own token (--token-file FILE, WARRANT_TOKEN, or --token)')
    const token = tokenFrom(flags)
    if (!token) throw new WarrantError('unauthenticated', "an approval needs a reviewer's or an admin's token: --token-file FILE, WARRANT_TOKEN, or --token TOKEN")
    const { gateway } = await openCliGateway({ config: flags.config })
    try {
      const actor = await gateway.principals.authenticate(token, 'cli')
      const result = await gateway.plans.decide(actor, planId, {
        decision: flags.reject ? 'reject' : 'approve',
        expected_plan_digest: flags.digest,
        ...(flags.comment === undefined ? {} : { comment: flags.comment }),
      })
      noteCliDetails({ decision: result.decision, decided_by: actor.principal, comment: flags.comment ?? null, plan_digest: result.plan_digest, approval_id: result.approval_id, counted: result.counted })
      if (flags.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
      else {
        const who = `${cellText(actor.name)} (${actor.principal})`
        const lines =
          result.decision === 'approve'
            ? [
                ...(result.counted ? [] : [`ALREADY APPROVED by ${who} at ${result.decided_at}: nothing new was recorded; one reviewer counts once`]),
                `APPROVED by ${who}: plan ${result.plan_id}, ${result.action.type} on ${result.target_count} record(s) of ${result.resource} in ${result.environment}`,
                `  plan digest: ${result.plan_digest}`,
                `  valid until: ${result.expires_at}`,
                `  plan state:  ${result.plan_state}${result.still_needed > 0 ? `; ${result.still_needed} more distinct reviewer(s) needed` : ''}`,
              ]
            : [`REJECTED by ${who}: plan ${result.plan_id} (${result.plan_digest}); it can no longer be approved or committed`]
        process.stdout.write(`${lines.join('\n')}\n`)
      }
    } finally {
      await gateway.close()
    }
  })
}
