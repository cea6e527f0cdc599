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

/** The token given by flag, file or WARRANT_TOKEN, if any. */
export function tokenFrom(flags: TokenFlags, env: NodeJS.ProcessEnv = process.env): string | null {
  if (flags.token ?? flags.asToken) return (flags.token ?? flags.asToken)!.trim()
  if (flags.tokenFile) {
    let text: string
    try {
      text = readFileSync(flags.tokenFile, 'utf8')
    } catch (error) {
      throw new WarrantError('unauthenticated', `cannot read --token-file "${flags.tokenFile}": ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`)
    }
    return text.trim() || null
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
