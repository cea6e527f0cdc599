import type { Command } from 'commander'
import { WarrantError, isReservedKey } from '../../contract/index.js'
import { cliActor, TOKEN_OPTIONS, type TokenFlags } from '../cli-actor.js'
import { noteCliAnswer } from '../cli-audit.js'
import { openCliGateway } from '../open-cli-gateway.js'
import { renderPlan } from '../render-selection.js'
import { collect, decimalArgument } from '../option-values.js'
import { EXIT } from '../exit-status.js'
import { reachLines, underHeadline } from '../render-reach.js'


/** `--param k=v`, typed by the action's declared parameter types (number, boolean, string). */
export function parseParams(terms: readonly string[], declared: Readonly<Record<string, { readonly type: string }>>): Record<string, string | number | boolean> {
  const params: Record<string, string | number | boolean> = {}
  const given = new Map<string, string>()
  for (const term of terms) {
    const eq = term.indexOf('=')
    if (eq < 1) throw new WarrantError('invalid_request', `cannot read --param "${term}": expected NAME=VALUE`, { param: term })
    const key = term.slice(0, eq)
    const raw = term.slice(eq + 1)
    // assigned, `__proto__` would set the object's prototype and the parameter vanish without a word
    if (isReservedKey(key)) throw new WarrantError('invalid_request', `--param "${term}": "${key}" is a reserved name, never a parameter name`, { param: key })
    // kept as its last value, the plan would be proposed on one of two values the operator wrote (HTTP refuses a
    // key named twice): the same value twice is one request, two values are refused
    const before = given.get(key)
    if (before !== undefined && before !== raw)
      throw new WarrantError('invalid_request', `--param ${key} is given twice with different values ("${key}=${before}" and "${term}"); give it once`, { param: key })
    given.set(key, raw)
    const type = Object.hasOwn(declared, key) ? declared[key]!.type : undefined
    if (type === 'number') {
      // the plan would write another value than the one given (HTTP and MCP refuse rounded numbers too)
      const read = decimalArgument(raw)
      if ('problem' in read) throw new WarrantError('invalid_request', `--param ${key}: "${raw}" ${read.problem}`, { param: key })
      params[key] = read.value
    } else if (type === 'boolean') {
      if (raw !== 'true' && raw !== 'false') throw new WarrantError('invalid_request', `--param ${key}: "${raw}" is not true or false`, { param: key })
      params[key] = raw === 'true'
    } else params[key] = raw
  }
  return params
}

export function registerPlan(program: Command): void {
  const command = program
    .command('plan <selection_id>')
    .description('propose one action on a frozen selection and print before → after, the plan digest and the approval it needs')
    .requiredOption('-a, --action <type>', "the action's name (see GET /v1/resources)")
    .option('-p, --param <name=value>', 'an action parameter (repeatable)', collect, [])
    .option('-c, --config <file>', 'config file')
    .option('--json', 'print exactly what POST /v1/selections/{id}/plans returns')
  for (const [flag, help] of TOKEN_OPTIONS) command.option(flag, help)
  command.action(async (selectionId: string, flags: TokenFlags & { action: string; param: string[]; config?: string; json?: boolean }) => {
    const { gateway } = await openCliGateway({ config: flags.config })
    try {
      const actor = await cliActor(gateway, flags)
      const selection = await gateway.selections.load(actor, selectionId)
      const declared = gateway.catalogue.get(selection.resource).config.actions[flags.action]?.params ?? {}
      const plan = await gateway.plans.propose(actor, selectionId, { action: { type: flags.action, params: parseParams(flags.param, declared) } })
      noteCliAnswer({ plan_id: plan.plan_id, selection_id: plan.selection_id })
      process.stdout.write(flags.json ? `${JSON.stringify(plan, null, 2)}\n` : `${underHeadline(renderPlan(plan), reachLines(gateway.config.resources[plan.resource]))}\n`)
      // a plan on an incomplete selection is reviewable, never approvable or committable: `plan && approve` must stop
      if (!plan.selection.complete) process.exitCode = EXIT.incomplete
    } finally {
      await gateway.close()
    }
  })
}
