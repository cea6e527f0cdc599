import { z } from 'zod'
import { selectionLookalikesSchema } from './lookalike-ids.js'
import { FILTER_DESCRIPTION, SELECTION_MAX_DEADLINE_MS, continuationSchema, cursorArgument, fieldList, filterSchema, incompleteReasonSchema, queryInteger, scopeSchema, warningSchema } from '../contract/index.js'

/**
 * The selection request and response shapes, on every surface (HTTP body, MCP tool input, CLI output).
 * Field names are part of the public contract.
 */

/** A rule name travels in URLs (`/excluded?rule=`): letters, digits and `_ . : -`. */
export const ruleNameSchema = z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'a rule name: 1 to 64 letters, digits, _ . : -')

export const exclusionRuleSchema = z
  .strictObject({
    rule: ruleNameSchema.describe('a name reviewers see'),
    filter: filterSchema.describe('records it matches are excluded under this rule'),
  })
  .meta({ id: 'ExclusionRule' })

export const selectionBudgetSchema = z
  .strictObject({
    max_pages: z.number().int().min(1).max(1_000_000).optional().describe('upstream pages to read at most'),
    max_items: z.number().int().min(1).max(50_000_000).optional().describe('records to walk at most'),
    deadline_ms: z.number().int().min(1).max(SELECTION_MAX_DEADLINE_MS).optional().describe('time to walk at most'),
  })
  .describe('limits; a walk they stop makes an incomplete, uncommittable selection')

export const selectionRequestSchema = z
  .strictObject({
    filter: filterSchema.default({}).describe(FILTER_DESCRIPTION),
    exclude: z
      .array(exclusionRuleSchema)
      .max(50)
      .default([])
      .describe('named exclusion rules; a record goes to the first that matches'),
    fields: fieldList().optional().describe('review fields to show; default all'),
    page_size: z.number().int().min(1).max(10_000).default(1000).describe('records per upstream page'),
    budget: selectionBudgetSchema.default({}),
  })
  .meta({ id: 'SelectionRequest' })
export type SelectionRequestInput = z.input<typeof selectionRequestSchema>

/** One frozen member: its position, immutable id, the version it had when read, and its review fields. */
export const selectionMemberSchema = z
  .object({
    ord: z.number().int().positive().describe('position in the frozen order (1-based, by id)'),
    id: z.string(),
    version: z.string().nullable().describe('ETag, revision or updated_at as read; null when unknown'),
    fields: z.record(z.string(), z.unknown()).describe("the selection's review fields"),
  })
  .meta({ id: 'SelectionMember' })

export const groupCountSchema = z
  .object({
    field: z.string(),
    values: z.array(z.object({ value: z.unknown(), count: z.number().int().nonnegative() })).describe('most frequent first'),
    distinct: z.number().int().nonnegative().describe('how many distinct values the field has in the selection (its members)'),
    complete: z
      .boolean()
      .describe("false when only the most frequent values are listed, or when the selection's inventory was incomplete: then the counts are of the records its walk returned only, and records it never reached may hold any value"),
    other_count: z.number().int().nonnegative().describe('members whose value is not listed'),
  })
  .meta({ id: 'GroupCount' })

export const exclusionSummarySchema = z
  .object({
    rule: z.string(),
    filter: filterSchema,
    count: z.number().int().nonnegative(),
    records_url: z.string().describe('where the excluded records are listed, page by page'),
  })
  .meta({ id: 'ExclusionSummary' })

export const selectionOriginSchema = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('recovery'), selection_id: z.string() }),
    z.object({ kind: z.literal('retry'), selection_id: z.string(), deadline_ms: z.number() }),
    z.object({ kind: z.literal('compensation'), operation_id: z.string(), plan_id: z.string() }),
    z.object({ kind: z.literal('remainder'), operation_id: z.string(), plan_id: z.string() }).describe("the targets the operation never sent, at the versions its plan's selection froze"),
  ])
  .meta({ id: 'SelectionOrigin' })

export const selectionViewSchema = z
  .object({
    selection_id: z.string(),
    resource: z.string(),
    environment: z.string().describe('where a change to these records would land'),
    state: z.enum(['frozen', 'expired']),
    selector: z.object({ filter: filterSchema, exclude: z.array(exclusionRuleSchema) }).describe('the filter and the exclusion rules, as given'),
    fields: z.array(z.string()),
    withheld_fields: z.array(z.string()).describe('fields frozen with the members that the resource denies now: never served, on any surface'),
    created_by: z.string().nullable(),
    created_at: z.string(),
    expires_at: z.string(),
    count: z.number().int().nonnegative(),
    digest: z.string().describe('sha256 of the canonical, ordered list of {id, version} of every member'),
    consistent_snapshot: z.boolean(),
    status: z.enum(['complete', 'partial']),
    complete: z.boolean().describe('false: the inventory was incomplete; the selection can be reviewed, never committed'),
    truncated: z.boolean(),
    incomplete_reasons: z.array(incompleteReasonSchema),
    continuation: continuationSchema.nullable().describe("the inventory walk's own continuation (a search cursor), when it stopped early"),
    warnings: z.array(warningSchema),
    scope: scopeSchema,
    committable: z.boolean().describe('complete, not expired, read where its connector still points: a plan on it can be approved and committed'),
    upstream_moved: z
      .string()
      .nullable()
      .describe("why its members no longer come from where its resource's connector points (re-pointed since it was frozen), or null; nothing is proposed or changed on it then"),
    recovery_of: z.string().nullable().describe('the incomplete selection this one recovers, if any'),
    compensation_of: z.string().nullable().describe('the operation this selection compensates, if any'),
    remainder_of: z.string().nullable().describe('the halted operation whose never-sent (pending) targets this selection holds, as its selection froze them, if any'),
    recovery: z
      .object({ method: z.literal('POST'), path: z.string(), count: z.number().int().nonnegative(), message: z.string() })
      .nullable()
      .describe('for an incomplete selection: how to make a complete one of the records it did return'),
    exclusions: z.array(exclusionSummarySchema),
    exclusion_rule: z.string().describe('how a record matching several rules is attributed'),
    groups: z.array(groupCountSchema),
    lookalike_ids: selectionLookalikesSchema,
    records: z.array(selectionMemberSchema).describe('the first page of members, in frozen order'),
    next_cursor: z.string().nullable(),
    records_url: z.string(),
    export_urls: z.object({ csv: z.string(), ndjson: z.string() }),
  })
  .meta({ id: 'Selection' })
export type SelectionView = z.infer<typeof selectionViewSchema>

/** What creating a selection answers: the selection, and whether this request made it or its idempotency key named it. */
export const createdSelectionViewSchema = selectionViewSchema
  .extend({
    created: z
      .boolean()
      .describe('false when the idempotency key named the selection an earlier request with that key and the same request made: it is handed back, nothing was walked again'),
  })
  .meta({ id: 'CreatedSelection' })
export type CreatedSelectionView = z.infer<typeof createdSelectionViewSchema>

/** strict, as every /v1 query: a parameter the route does not take is refused, never dropped */
export const memberPageQuerySchema = z.strictObject({
  cursor: cursorArgument(4096).optional().describe('next_cursor of the previous page, exactly as given; leave it out for the first'),
  limit: queryInteger({ min: 1, max: 1000 }).default(100),
})

/**
 * Every page of a selection's records repeats whether its inventory was complete: a page alone, read by
 * someone who never saw the overview, must not pass a cut-short walk off as every record the filter matches.
 */
export const pageCompleteness = {
  complete: z.boolean().describe("the selection's inventory: false means these are only the records a cut-short walk returned, not every record the filter matches"),
  incomplete_reasons: z.array(incompleteReasonSchema).describe("why the selection's inventory is incomplete; empty when complete"),
}

export const memberPageSchema = z
  .object({
    selection_id: z.string(),
    count: z.number().int().nonnegative(),
    digest: z.string(),
    ...pageCompleteness,
    records: z.array(selectionMemberSchema),
    next_cursor: z.string().nullable().describe('null on the last page'),
    page: z.object({ returned: z.number().int().nonnegative(), limit: z.number().int().positive(), ordering: z.string() }),
  })
  .meta({ id: 'SelectionMemberPage' })
export type MemberPage = z.infer<typeof memberPageSchema>

export const excludedPageQuerySchema = memberPageQuerySchema.extend({ rule: ruleNameSchema })

export const excludedPageSchema = z
  .object({
    selection_id: z.string(),
    rule: z.string(),
    filter: filterSchema,
    count: z.number().int().nonnegative(),
    ...pageCompleteness,
    records: z.array(selectionMemberSchema).describe('records this rule removed (ord is the position among them)'),
    next_cursor: z.string().nullable(),
    page: z.object({ returned: z.number().int().nonnegative(), limit: z.number().int().positive(), ordering: z.string() }),
  })
  .meta({ id: 'ExcludedPage' })
export type ExcludedPage = z.infer<typeof excludedPageSchema>

export const exportFormatSchema = z.enum(['csv', 'ndjson'])
export type ExportFormat = z.infer<typeof exportFormatSchema>
