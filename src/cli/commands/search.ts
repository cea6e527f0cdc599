import type { Command } from 'commander'
import { SEARCH_MAX_DEADLINE_MS, WarrantError } from '../../contract/index.js'
import { searchRequestSchema, searchResource } from '../../resources/index.js'
import { EXIT } from '../exit-status.js'
import { openCliGateway } from '../open-cli-gateway.js'
import { parseFilterTerms } from '../parse-filter.js'
import { renderEnvelope, type ResumeChange } from '../render-envelope.js'
import { shellCommand } from '../shell-word.js'
import { collect, walkBudgetOptions, type WalkBudgetFlags } from '../option-values.js'
import { reachLines, underHeadline } from '../render-reach.js'


/** The flag that sets each key of the search request. */
const FLAG_OF: Readonly<Record<string, string>> = {
  filter: '--filter',
  fields: '--fields',
  page_size: '--page-size',
  cursor: '--cursor',
  'budget.max_pages': '--max-pages',
  'budget.max_items': '--max-items',
  'budget.deadline_ms': '--deadline-ms',
}

export function registerSearch(program: Command): void {
  const command = program
    .command('search <resource>')
    .description('search a resource and print the envelope, completeness first')
    .option('-c, --config <file>', 'config file')
    .option('-f, --filter <term>', 'k=v, k=a,b, k!=v, k<v, k<=v, k>v, k>=v, k~tag, k=null (repeatable)', collect, [])
    .option('--fields <list>', 'comma-separated review fields')
  walkBudgetOptions(command, 'reported as CLIENT_LIMIT_REACHED', SEARCH_MAX_DEADLINE_MS)
    .option('--cursor <cursor>', 'continue an earlier walk with its continuation cursor')
    .option('--json', 'print the envelope as JSON')
    .action(async (name: string, flags: WalkBudgetFlags & { config?: string; filter: string[]; fields?: string; cursor?: string; json?: boolean }) => {
      const { gateway } = await openCliGateway({ config: flags.config, readOnly: true })
      try {
        const resource = gateway.catalogue.get(name)
        const request = searchRequestSchema.safeParse({
          filter: parseFilterTerms(flags.filter, resource.config),
          fields: flags.fields?.split(',').map((f) => f.trim()),
          page_size: flags.pageSize,
          cursor: flags.cursor,
          budget: { max_pages: flags.maxPages, max_items: flags.maxItems, deadline_ms: flags.deadlineMs },
        })
        // an option out of the request's bounds is the caller's input, named by its flag: never a bug report
        if (!request.success) {
          const issue = request.error.issues[0]!
          const key = issue.path.join('.')
          throw new WarrantError('invalid_request', `${FLAG_OF[key] ?? key}: ${issue.message}`, { field: FLAG_OF[key] ?? key })
        }
        const envelope = await searchResource(resource, request.data, { cursorCodec: gateway.cursorCodec })
        if (flags.json) process.stdout.write(`${JSON.stringify(envelope, null, 2)}\n`)
        else {
          process.stdout.write(`${underHeadline(renderEnvelope(envelope, { resumeCommand: (change) => searchAgain(name, flags, change) }), reachLines(gateway.config.resources[name]))}\n`)
        }
        if (!envelope.complete) process.exitCode = EXIT.incomplete
      } finally {
        await gateway.close()
      }
    })
}

/**
 * This search as a command to paste, with `change` made: the same config, filter, fields, page size and budget
 * (dropped, the continuation walked under other limits, on the default config), the deadline raised where the
 * continuation asks for a longer one, and the cursor when there is one.
 */
function searchAgain(name: string, flags: WalkBudgetFlags & { config?: string; filter: readonly string[]; fields?: string }, change: ResumeChange): string {
  const option = (flag: string, value: string | number | undefined) => (value === undefined ? [] : [flag, String(value)])
  const deadlineMs = change.deadlineMs === undefined ? flags.deadlineMs : Math.max(change.deadlineMs, flags.deadlineMs ?? 0)
  return shellCommand([
    'warrant',
    'search',
    name,
    ...flags.filter.flatMap((f) => ['--filter', f]),
    ...option('--fields', flags.fields),
    ...option('--page-size', flags.pageSize),
    ...option('--max-pages', flags.maxPages),
    ...option('--max-items', flags.maxItems),
    ...option('--deadline-ms', deadlineMs),
    ...option('--cursor', change.cursor),
    ...option('--config', flags.config),
  ])
}
