import { readFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { type Actor, WarrantError } from '../contract/index.js'
import type { Gateway } from '../gateway/index.js'
import { noteCliActor } from './cli-audit.js'

export interface TokenFlags {
  readonly token?: string
  readonly asToken?: string
  readonly tokenFile?: string
}

/** Options every acting command takes: whose token it acts with. */
export const TOKEN_OPTIONS = [
  ['--token <token>', 'act as the principal of this bearer token (visible in `ps`; prefer --token-file or WARRANT_TOKEN)'],
  ['--as-token <token>', 'same as --token'],
  ['--token-file <file>', 'read the bearer token from this file'],
] as const

/**
 * The token given by flag, file or WARRANT_TOKEN, if any. A flag or file that holds nothing is refused rather
 * than read as "no token": that would make the command run as the local operator, with every scope, instead of
 * the principal the flag was meant to name (an empty WARRANT_TOKEN is taken as unset, as shells set it).
 */
export function tokenFrom(flags: TokenFlags, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const [flag, value] of [['--token', flags.token], ['--as-token', flags.asToken]] as const)
    if (value !== undefined) {
      if (value.trim() === '') throw new WarrantError('unauthenticated', `${flag} is empty: give the token itself (or --token-file FILE, WARRANT_TOKEN)`, { field: flag })
      return value.trim()
    }
  if (flags.tokenFile !== undefined) {
    let text: string
    try {
      text = readFileSync(flags.tokenFile, 'utf8')
    } catch (error) {
      throw new WarrantError('unauthenticated', `cannot read --token-file "${flags.tokenFile}": ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`)
    }
    if (text.trim() === '') throw new WarrantError('unauthenticated', `--token-file "${flags.tokenFile}" is empty: it should hold one token, as \`warrant token create … > FILE\` writes it`, { field: '--token-file' })
    return text.trim()
  }
  return env.WARRANT_TOKEN?.trim() || null
}

/**
 * Who a CLI command acts as. With a token: its principal, authenticated like any HTTP call. Without one: the
 * local operator, who has the store on disk anyway, with an agent's role: it can select and propose, never
 * approve (an approval always needs a reviewer's or admin's token). `flags` may be the token itself (or
 * undefined: then WARRANT_TOKEN, else the local operator).
 */
export async function cliActor(gateway: Gateway, flags: TokenFlags | string | undefined): Promise<Actor> {
  const token = tokenFrom(typeof flags === 'string' ? { token: flags } : (flags ?? {}))
  if (token) return gateway.principals.authenticate(token, 'cli')
  const user = safeUser()
  const actor: Actor = { principal: `local:${user}`, name: `local operator ${user}`, role: 'agent', scopes: { resources: '*', actions: '*' }, surface: 'cli' }
  noteCliActor(actor)
  return actor
}

function safeUser(): string {
  try {
    return userInfo().username || 'unknown'
  } catch {
    return 'unknown'
  }
}

/** Adds `--config` and the token options that every command acting as a principal takes. */
export function withPrincipalOptions<C extends { option(flags: string, description: string): C }>(command: C): C {
  command.option('-c, --config <file>', 'config file')
  for (const [flag, help] of TOKEN_OPTIONS) command.option(flag, help)
  return command
}
