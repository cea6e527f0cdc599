import type { Command } from 'commander'
import { checkIdempotencyKey, type Filter, SELECTION_MAX_DEADLINE_MS, WarrantError } from '../../contract/index.js'
import { cliActor, TOKEN_OPTIONS, type TokenFlags } from '../cli-actor.js'
import { noteCliAnswer } from '../cli-audit.js'
import { EXIT } from '../exit-status.js'
import { createProgress, freezeProgressLine } from '../progress.js'
import type { FreezeProgress } from '../../selections/index.js'
import { openCliGateway } from '../open-cli-gateway.js'
import { parseFilterTerms } from '../parse-filter.js'
import { renderSelection } from '../render-selection.js'
import { collect, walkBudgetOptions, type WalkBudgetFlags } from '../option-values.js'
import { onInterrupt } from '../interrupt.js'
import { reachLines, underHeadline } from '../render-reach.js'


/**
 * `--exclude 'rule:term'`: the rule's name, a colon, one filter term (`tags~disputed`, `status=paused`).
 * Several terms for one rule combine with AND; rules keep the order they first appear in.
 */
export function parseExcludeTerms(terms: readonly string[]): { rule: string; terms: string[] }[] {
  const rules: { rule: string; terms: string[] }[] = []
  for (const term of terms) {
    const colon = term.indexOf(':')
    if (colon < 1 || colon === term.length - 1)
      throw new WarrantError('invalid_request', `cannot read --exclude "${term}": expected RULE:FIELD~VALUE or RULE:FIELD=VALUE, e.g. disputed:tags~disputed`, { exclude: term })
    const rule = term.slice(0, colon)
    const existing = rules.find((r) => r.rule === rule)
    if (existing) existing.terms.push(term.slice(colon + 1))
    else rules.push({ rule, terms: [term.slice(colon + 1)] })
  }
  return rules
}

export function registerSelect(program: Command): void {
  const command = program
    .command('select <resource>')
    .description('freeze a selection (exact members, digest, exclusions per rule, groups) and print it, completeness first')
    .option('-c, --config <file>', 'config file')
    .option('-f, --filter <term>', 'k=v, k=a,b, k!=v, k<v, k<=v, k>v, k>=v, k~tag, k=null (repeatable)', collect, [])
    .option('-x, --exclude <rule:term>', "an exclusion rule, e.g. 'disputed:tags~disputed' (repeatable; a record goes under the first rule it matches)", collect, [])
    .option('--fields <list>', 'comma-separated review fields to show')
  walkBudgetOptions(command, 'the selection is then incomplete: reviewable, never committable', SELECTION_MAX_DEADLINE_MS)
    .option('--idempotency-key <key>', 'the same key and request answer the selection the first such call froze (nothing walked again); another request with it is refused')
    .option('--json', 'print exactly what POST /v1/resources/{resource}/selections returns')
    .option('-q, --quiet', 'no progress line on stderr')
  for (const [flag, help] of TOKEN_OPTIONS) command.option(flag, help)
  command.action(
    async (
      name: string,
      flags: TokenFlags & WalkBudgetFlags & { config?: string; filter: string[]; exclude: string[]; fields?: string; idempotencyKey?: string; json?: boolean; quiet?: boolean },
    ) => {
      // refused naming the option, before the store is opened
      if (flags.idempotencyKey !== undefined) checkIdempotencyKey(flags.idempotencyKey, '--idempotency-key')
      const { gateway } = await openCliGateway({ config: flags.config })
      try {
        const actor = await cliActor(gateway, flags)
        const resource = gateway.catalogue.get(name)
        const filter: Filter = parseFilterTerms(flags.filter, resource.config)
        const exclude = parseExcludeTerms(flags.exclude).map((r) => ({ rule: r.rule, filter: parseFilterTerms(r.terms, resource.config) }))
        const budget = {
          ...(flags.maxPages === undefined ? {} : { max_pages: flags.maxPages }),
          ...(flags.maxItems === undefined ? {} : { max_items: flags.maxItems }),
          ...(flags.deadlineMs === undefined ? {} : { deadline_ms: flags.deadlineMs }),
        }
        const progress = createProgress({ quiet: flags.quiet })
        const started = Date.now()
        const onProgress = (p: FreezeProgress) => progress.update(freezeProgressLine(`selecting from ${name}`, p, Date.now() - started))
        onProgress({ pages: 0, examined: 0, members: 0, excluded: 0 })
        // Ctrl-C: the walk stops and removes the selection it was building (only this one: another gateway on the
        // same store may be building its own). Left `building`, its row and members would stay in the store forever.
        const stop = new AbortController()
        const creating = gateway.selections.create(actor, name, {
          filter,
          exclude,
          ...(flags.fields !== undefined ? { fields: flags.fields.split(',').map((f) => f.trim()) } : {}),
          ...(flags.pageSize === undefined ? {} : { page_size: flags.pageSize }),
          budget,
        }, { onProgress, signal: stop.signal, idempotencyKey: flags.idempotencyKey ?? null })
        const forget = onInterrupt(async (reason) => {
          stop.abort(reason)
          // frozen just before the signal: no one was given its id, so it is removed too (unless a plan names it). One
          // its idempotency key named (made by an earlier call) is not this call's to remove.
          const view = await creating.catch(() => null)
          if (view?.created) await gateway.selections.discardUnused(view.selection_id)
        })
        const view = await creating.finally(() => {
          forget()
          progress.done()
        })
        // interrupted while the view was read: the cleanup removes it, so its id must not be printed as an answer
        stop.signal.throwIfAborted()
        noteCliAnswer({ selection_id: view.selection_id })
        process.stdout.write(flags.json ? `${JSON.stringify(view, null, 2)}\n` : `${underHeadline(renderSelection(view), reachLines(gateway.config.resources[view.resource]))}\n`)
        if (!view.complete) process.exitCode = EXIT.incomplete
      } finally {
        await gateway.close()
      }
    },
  )
}
