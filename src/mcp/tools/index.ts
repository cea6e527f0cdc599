import type { ToolDefinition } from '../tool.js'
import { commitChange, getOperation, proposeCompensation, proposeRemainder } from './operations.js'
import { getPlan, proposeChange } from './plans.js'
import { listResources, search } from './resources.js'
import { createSelection, readSelection } from './selections.js'

/**
 * Every tool, in the order of the flow. No tool approves: approval is a person's act on the review page
 * (or POST /v1/plans/{id}/approvals with a reviewer's token).
 */
export const WARRANT_TOOLS: readonly ToolDefinition[] = [
  listResources,
  search,
  createSelection,
  readSelection,
  proposeChange,
  getPlan,
  commitChange,
  getOperation,
  proposeCompensation,
  proposeRemainder,
]
