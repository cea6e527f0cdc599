import { z } from 'zod'
import { cursorArgument, idempotencyKeySchema, revealed } from '../../contract/index.js'
import {
  type ExcludedPage,
  excludedPageSchema,
  type MemberPage,
  memberPageSchema,
  ruleNameSchema,
  selectionRequestSchema,
  type SelectionView,
  selectionViewSchema,
  type CreatedSelectionView,
  createdSelectionViewSchema,
  UNREACHED,
} from '../../selections/index.js'
import { completenessLabel, lookalikeClause, named, plural, quoted, warningsClause } from '../summaries.js'
import { defineTool, READ_ONLY, readOnlyBy, RULES_BRIEF } from '../tool.js'
import { resourceNameSchema } from './resources.js'

export const selectionIdSchema = z.string().min(1).max(200).describe('from create_selection')

/**
 * How to get a complete selection after an incomplete one: a frozen selection is never continued (create_selection
 * takes no cursor), so the walk's continuation says only when, or with what budget, to create it again.
 */
function againHint(c: SelectionView['continuation']): string {
  const again = 'a selection is never continued (create_selection takes no cursor):'
  if (!c) return `${again} deal with the reasons, then create the selection again`
  switch (c.kind) {
    case 'retry_after':
      return `${again} create the selection again after ${c.not_before}`
    case 'retry_with_deadline':
      return `${again} create the selection again with budget.deadline_ms of at least ${c.minimum_deadline_ms}`
    case 'next_cursor':
      return `${again} create the selection again with a larger budget (max_pages, max_items), or a narrower filter`
    case 'narrow_query':
      return `${again} narrow the filter and create a selection per part: ${c.message}`
  }
}

/** The frozen-selection summary: completeness first, then whether it can be committed, and why not. */
export function selectionSummary(view: SelectionView): string {
  const label = completenessLabel(view)
  const where = `${view.resource} (${view.environment})`
  const head = `${label}: selection ${view.selection_id} froze ${plural(view.count, 'record')} of ${where}, digest ${view.digest}, expires ${view.expires_at}.`
  const exclusions = view.exclusions.length ? ` Excluded: ${view.exclusions.map((e) => `${named(e.rule)} ${e.count}`).join(', ')}.` : ''
  const usable = view.committable
    ? ' It can be proposed for a change (propose_change).'
    : view.upstream_moved
      ? ` It cannot be proposed on or committed: ${revealed(view.upstream_moved)}.`
      : view.complete
      ? ` It cannot be committed (state ${view.state}).`
      : ` Its inventory was incomplete, so it can be reviewed but NEVER committed; show the reasons to the person.${view.recovery ? ` To act on the ${view.recovery.count} records it did return, create a new selection with filter {"id": {"in": [those ids]}} (complete once its walk reads every one of them again; ${UNREACHED}).` : ''} Inventory: ${againHint(view.continuation)}.`
  const snapshot = view.consistent_snapshot ? '' : ' No consistent snapshot: at commit each batch is re-read and the operation halts if membership or a version changed.'
  const more = view.next_cursor ? ` First ${plural(view.records.length, 'record')} shown; read_selection with part "records" and the next_cursor for more.` : ''
  return `${head}${lookalikeClause(view.lookalike_ids)}${exclusions}${usable}${snapshot}${more}${warningsClause(view.warnings)}`
}

export const createSelection = defineTool({
  name: 'create_selection',
  title: 'Create a frozen selection',
  // Same answer as POST /v1/resources/{resource}/selections.
  description: [
    'Freeze the records a filter matches, minus named exclusion rules: members, digest, groups, exclusion counts, completeness. Changes are proposed on a selection, never on a search. An incomplete one can be reviewed, never committed.',
    RULES_BRIEF,
  ].join('\n'),
  input: z.strictObject({
    resource: resourceNameSchema,
    ...selectionRequestSchema.shape,
    idempotency_key: idempotencyKeySchema
      .optional()
      .describe('optional: a new UUID per selection; retry with it (and the same arguments) to get the selection that call froze, not a second walk'),
  }),
  output: createdSelectionViewSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ resource, idempotency_key, ...request }, { gateway, actor, signal, walk }): Promise<CreatedSelectionView> {
    if (walk) walk.walked = true
    // The client's cancel stops the walk, and the build is removed as an interrupted one is (freezeFromWalk): no
    // half-frozen selection is left behind.
    const view = await gateway.selections.create(actor, resource, request, {
      idempotencyKey: idempotency_key ?? null,
      ...(signal ? { signal } : {}),
      ...(walk ? { onProgress: (progress) => (walk.pages = progress.pages) } : {}),
    })
    if (walk) walk.finished = true
    // frozen just before the cancel: the SDK drops the answer, so no one got its id; removed (unless a plan names
    // it), as the CLI's Ctrl-C does. One its idempotency key named (an earlier call's) is not this call's to remove.
    if (signal?.aborted && view.created) {
      await gateway.selections.discardUnused(view.selection_id)
      signal.throwIfAborted()
    }
    return view
  },
  summarize: (view: CreatedSelectionView) =>
    view.created
      ? selectionSummary(view)
      : `ALREADY CREATED with this idempotency_key: nothing was walked again; this is the selection the first call with it froze (to walk again, use a new idempotency_key). ${selectionSummary(view)}`,
})

const readSelectionInput = z.strictObject({
  selection_id: selectionIdSchema,
  part: z
    .enum(['overview', 'records', 'excluded'])
    .default('overview')
    .describe('overview; records: a page of members; excluded: a page one rule removed'),
  rule: ruleNameSchema.optional().describe('for excluded: the rule'),
  cursor: cursorArgument(4096).optional().describe('next_cursor of the previous page; leave it out for the first (null and "" are refused)'),
  limit: z.number().int().min(1).max(1000).optional().describe('records per page, default 100'),
})
  .refine((args) => args.part !== 'excluded' || args.rule !== undefined, { path: ['rule'], message: 'required when part is "excluded"' })
  .superRefine(readOnlyBy({ rule: ['excluded'], cursor: ['records', 'excluded'], limit: ['records', 'excluded'] }))

type ReadSelectionAnswer = SelectionView | MemberPage | ExcludedPage

export const readSelection = defineTool({
  name: 'read_selection',
  title: 'Read a selection',
  // Same answers as GET /v1/selections/{id}, /v1/selections/{id}/records and /v1/selections/{id}/excluded?rule=.
  description: ['Read a frozen selection: its overview, a page of members, or a page one exclusion rule removed.', RULES_BRIEF].join('\n'),
  input: readSelectionInput,
  output: z.union([selectionViewSchema, memberPageSchema, excludedPageSchema]),
  annotations: { ...READ_ONLY },
  async run(args, { gateway, actor }): Promise<ReadSelectionAnswer> {
    const page = { ...(args.cursor === undefined ? {} : { cursor: args.cursor }), limit: args.limit ?? 100 }
    if (args.part === 'records') return gateway.selections.page(actor, args.selection_id, page)
    if (args.part === 'excluded') {
      return gateway.selections.excluded(actor, args.selection_id, { rule: args.rule!, ...page })
    }
    return gateway.selections.view(actor, args.selection_id)
  },
  summarize(answer, args) {
    if (args.part === 'overview') return selectionSummary(answer as SelectionView)
    const page = answer as MemberPage | ExcludedPage
    const what = args.part === 'excluded' ? `records excluded by rule ${quoted((page as ExcludedPage).rule)}` : 'members'
    const head = page.next_cursor ? 'MORE PAGES' : 'LAST PAGE'
    const next = page.next_cursor ? 'call again with cursor = next_cursor, unchanged, for the rest' : 'nothing follows'
    const partial = page.complete ? '' : ' The selection\'s inventory was incomplete: these are only the records its walk returned, not every record the filter matches; show incomplete_reasons to the person.'
    return `${completenessLabel(page)} selection: ${head}: ${plural(page.records.length, 'record')} of the ${page.count} ${what} of selection ${page.selection_id}; ${next}. The selection is frozen: pages never change.${partial}`
  },
})

