import type { Command } from 'commander'
import { noEnabledAdminLeft, type PrincipalStatusChange, statusAuditDetails, statusReason } from '../../auth/index.js'
import { cliActor, type TokenFlags, withPrincipalOptions } from '../cli-actor.js'
import { noteCliDetails } from '../cli-audit.js'
import { openCliGateway } from '../open-cli-gateway.js'
import { cellText, padded, textColumns } from '../table-cell.js'

type StatusFlags = TokenFlags & { reason?: string; config?: string; json?: boolean }

/** The reason as recorded (see `statusReason`): refused before anything is opened, so a blank one changes nothing. */
function reasonOf(flags: StatusFlags, required: boolean): string | null {
  return statusReason(flags.reason, required, '--reason')
}

/**
 * `warrant principal list | disable NAME --reason TEXT | enable NAME`. A disable is what a platform engineer reaches
 * for when an agent misbehaves or a reviewer's laptop is gone: every token of the principal at once (a revoke is one
 * token), seen by every gateway on the store at its next request. The authority is the operator's, who holds the
 * config and the store, as for `warrant token`; a token, when given, names who acted in the audit row.
 */
export function registerPrincipal(program: Command): void {
  const principal = program.command('principal').description('principals (the people and named services tokens belong to): list, disable, enable')
  principal
    .command('list')
    .description('every principal with its role, id, live tokens, and whether it is disabled')
    .option('-c, --config <file>', 'config file')
    .option('--json', 'print as JSON')
    .action(async (flags: { config?: string; json?: boolean }) => {
      const { gateway } = await openCliGateway({ config: flags.config, readOnly: true })
      try {
        const listed = await gateway.principals.listPrincipals()
        if (flags.json) process.stdout.write(`${JSON.stringify(listed, null, 2)}\n`)
        else if (listed.length === 0) process.stdout.write('no principals: none was created yet (warrant token create)\n')
        else {
          const width = Math.max(...listed.map((p) => textColumns(cellText(p.name))))
          for (const p of listed)
            process.stdout.write(`${padded(cellText(p.name), width)}  ${p.role.padEnd(8)}  ${p.principal_id}  ${p.disabled_at ? `DISABLED ${p.disabled_at}` : p.last_disabled_at ? `enabled (last disabled ${p.last_disabled_at})` : 'enabled'}\n`)
        }
      } finally {
        await gateway.close()
      }
    })

  for (const verb of ['disable', 'enable'] as const) {
    const said = STATUS[verb]
    const command = principal.command(`${verb} <name>`).description(said.description)
    if (said.reasonRequired) command.requiredOption('--reason <text>', said.reasonHelp)
    else command.option('--reason <text>', said.reasonHelp)
    withPrincipalOptions(command)
      .option('--json', 'print the change as JSON')
      .action(async (name: string, flags: StatusFlags) => {
        const reason = reasonOf(flags, said.reasonRequired)
        const change = await changeStatus(name, flags, verb, reason)
        if (flags.json) return void process.stdout.write(`${JSON.stringify({ ...change, reason }, null, 2)}\n`)
        const who = `principal "${cellText(change.name)}"`
        process.stdout.write(`${(change.changed ? said.changed(who, change, reason) : [said.unchanged(who, change)]).join('\n')}\n`)
      })
  }
}

/** What each of the two commands says: its help, and its answer when it changed the principal and when it did not. */
const STATUS = {
  disable: {
    description: 'refuse every token of this principal from the next request on, on every gateway sharing the store, and stop counting its approvals; operations it already committed keep running',
    reasonRequired: true,
    reasonHelp: 'what it did, or why it is stopped: kept in the audit log',
    unchanged: (who: string, change: PrincipalStatusChange) => `${who} was already disabled at ${change.disabled_at}: nothing changed`,
    changed: (who: string, change: PrincipalStatusChange, reason: string | null) => [
      `disabled ${who} (${change.role}, ${change.principal_id}) at ${change.disabled_at}: reason "${cellText(reason)}"`,
      `  its ${change.live_tokens} live token(s) are refused from the next request on (401 unauthenticated, reason principal_disabled), on every gateway sharing this store`,
      '  the approvals it gave, and those given on plans it proposed, no longer count, even once it is enabled again; an operation it already committed keeps running (a person approved it)',
    ],
  },
  enable: {
    description: 'let a disabled principal act again: its live tokens work; the approvals it gave before the disable (and those on plans it proposed before it) stay void',
    reasonRequired: false,
    reasonHelp: 'why it may act again: kept in the audit log',
    unchanged: (who: string) => `${who} is not disabled: nothing changed`,
    changed: (who: string, change: PrincipalStatusChange) => [
      `enabled ${who} (${change.role}, ${change.principal_id}), disabled since ${change.was_disabled_at}`,
      `  its ${change.live_tokens} live token(s) work again; the approvals it gave before ${change.was_disabled_at}, and those given on plans it proposed before then, stay void: a reviewer approves again`,
      '  (a token that may have leaked is revoked on its own: warrant token revoke TOKEN_ID)',
    ],
  },
} as const

/** Opens the gateway, names the actor, makes the change, and puts what it did on the command's audit row. */
async function changeStatus(name: string, flags: StatusFlags, verb: 'disable' | 'enable', reason: string | null): Promise<PrincipalStatusChange> {
  const { gateway } = await openCliGateway({ config: flags.config })
  try {
    await cliActor(gateway, flags)
    const change = await gateway.principals[verb](name)
    const noAdminLeft = noEnabledAdminLeft(change)
    // the command's one audit row (`cli:principal disable`) carries what it did: a repeat says it changed nothing
    noteCliDetails(statusAuditDetails(verb, change, reason))
    // Allowed, not refused: over HTTP an admin's token is needed only for GET /metrics (reviewers approve and read the
    // audit too), and principals and tokens are made here by whoever holds the store, so no admin left locks nobody
    // out. Said, so it is not found out when Prometheus starts failing.
    if (noAdminLeft && verb === 'disable')
      process.stderr.write('warning: no enabled admin remains (GET /metrics needs an admin token); `warrant principal enable NAME` or `warrant token create --role admin --name NAME` gives one back\n')
    return change
  } finally {
    await gateway.close()
  }
}
