import type { Command } from 'commander'
import { ROLES, type Role, WarrantError } from '../../contract/index.js'
import type { Catalogue } from '../../resources/index.js'
import { openCliGateway } from '../open-cli-gateway.js'
import { cellText } from '../table-cell.js'

/** 100 years. */
const MAX_TTL_DAYS = 36_500

const list = (value: string) => value.split(',').map((v) => v.trim()).filter(Boolean)

export function registerToken(program: Command): void {
  const token = program.command('token').description('bearer tokens for agents, reviewers and admins')
  token
    .command('create')
    .description('create a principal (a person or named service) and its token, or --principal NAME: another token for an existing one (printed once; only its hash is stored)')
    .option('--name <name>', 'the new principal: who or what holds it; a taken name is refused')
    .option('--role <role>', `the new principal's role: one of ${ROLES.join(', ')}`)
    .option('--principal <name>', "add a token to this existing principal (its role and scopes stand); one principal counts as one reviewer")
    .option('--resources <list>', 'comma-separated resources the token may use (agents); default all', list)
    .option('--actions <list>', 'comma-separated actions the token may propose and commit (agents)', list)
    .option('--ttl-days <n>', 'days until it expires', '30')
    .option('-c, --config <file>', 'config file')
    .option('--json', 'print as JSON')
    .action(async (flags: { role?: string; name?: string; principal?: string; resources?: string[]; actions?: string[]; ttlDays: string; config?: string; json?: boolean }) => {
      const days = Number(flags.ttlDays)
      // bounded: a larger one (1e12, Infinity) names no date, and failed as a bug ("Invalid time value")
      if (!(days > 0 && days <= MAX_TTL_DAYS)) throw new WarrantError('invalid_request', `--ttl-days must be a positive number of days up to ${MAX_TTL_DAYS}, not "${flags.ttlDays}"`)
      if (flags.principal !== undefined) {
        const given = (['name', 'role', 'resources', 'actions'] as const).filter((f) => flags[f] !== undefined)
        if (given.length > 0)
          throw new WarrantError('invalid_request', `--principal adds a token to an existing principal, whose role and scopes stand: drop ${given.map((f) => `--${f}`).join(', ')}`, { field: given[0] })
      } else {
        if (flags.role === undefined) throw new WarrantError('invalid_request', `--role is required for a new principal: one of ${ROLES.join(', ')}`, { field: 'role' })
        if (!ROLES.includes(flags.role as Role)) throw new WarrantError('invalid_request', `--role must be one of ${ROLES.join(', ')}, not "${flags.role}"`, { field: 'role' })
        if (flags.name === undefined) throw new WarrantError('invalid_request', '--name is required: the person or service the new principal is (or --principal NAME to add a token to an existing one)', { field: 'name' })
      }
      const { gateway } = await openCliGateway({ config: flags.config })
      try {
        for (const r of flags.resources ?? []) gateway.catalogue.get(r)
        refuseUnknownActions(gateway.catalogue, flags.resources, flags.actions)
        const ttlMs = days * 86_400_000
        const issued =
          flags.principal !== undefined
            ? await gateway.principals.addToken({ principal: flags.principal, ttlMs })
            : await gateway.principals.issue({
                name: flags.name!,
                role: flags.role as Role,
                scopes: { resources: flags.resources ?? '*', actions: flags.actions ?? (flags.role === 'agent' ? [] : '*') },
                ttlMs,
              })
        // The token alone on stdout, so `warrant token create --role reviewer --name alice > reviewer.token` makes a token file.
        if (flags.json) process.stdout.write(`${JSON.stringify(issued, null, 2)}\n`)
        else {
          process.stdout.write(`${issued.token}\n`)
          process.stderr.write(`(${issued.role} "${cellText(issued.name)}", token ${issued.token_id}, expires ${issued.expires_at}; shown once)\n`)
        }
      } finally {
        await gateway.close()
      }
    })
  token
    .command('list')
    .description('list tokens with the principal each belongs to (never their values); a disabled principal\'s are marked PRINCIPAL DISABLED')
    .option('-c, --config <file>', 'config file')
    .action(async (flags: { config?: string }) => {
      const { gateway } = await openCliGateway({ config: flags.config, readOnly: true })
      try {
        const tokens = await gateway.principals.list()
        // nothing printed reads the same as a command that broke
        if (tokens.length === 0) process.stdout.write('no tokens: none was created yet (warrant token create)\n')
        // a principal's name is its creator's text: escaped, so it cannot draw a token line of its own
        for (const t of tokens)
          process.stdout.write(`${t.token_id}  ${t.role.padEnd(8)}  principal=${cellText(t.name)}  scopes=${JSON.stringify(t.scopes)}  expires=${t.expires_at ?? 'never'}${t.revoked_at ? `  REVOKED ${t.revoked_at}` : ''}${t.disabled_at ? `  PRINCIPAL DISABLED ${t.disabled_at}` : ''}\n`)
      } finally {
        await gateway.close()
      }
    })
  token
    .command('revoke <token_id>')
    .description('revoke a token by its id')
    .option('-c, --config <file>', 'config file')
    .action(async (id: string, flags: { config?: string }) => {
      const { gateway } = await openCliGateway({ config: flags.config })
      try {
        await gateway.principals.revoke(id)
        process.stdout.write(`revoked ${id}\n`)
      } finally {
        await gateway.close()
      }
    })
}

/**
 * Every `--actions` word names an action of a resource the token may use (`name`, or `resource.name`): a typo
 * (`pause_colection`) made a token that may run no action, exit 0, and the agent's plans were refused as forbidden
 * far from the mistake, where `--resources` with a typo was already refused.
 */
function refuseUnknownActions(catalogue: Catalogue, resources: readonly string[] | undefined, actions: readonly string[] | undefined): void {
  if (actions === undefined) return
  const known = (resources ?? catalogue.names).flatMap((name) => Object.keys(catalogue.get(name).config.actions).map((action) => ({ resource: name, action })))
  const exists = (word: string) => known.some(({ resource, action }) => word === action || word === `${resource}.${action}`)
  const unknown = actions.filter((word) => !exists(word))
  if (unknown.length === 0) return
  const names = known.length === 0 ? 'none: no resource in scope has an action' : known.map(({ resource, action }) => `${action} (${resource})`).join(', ')
  throw new WarrantError('invalid_request', `--actions: ${unknown.map((w) => `"${cellText(w)}"`).join(', ')} is not an action of a resource this token may use; the actions are: ${names}`, {
    field: '--actions',
  })
}
