import { z } from 'zod'
import { ROLES } from '../contract/index.js'

const timestamp = z.string().describe('ISO 8601, UTC')

export const principalListingSchema = z
  .object({
    principal_id: z.string(),
    name: z.string(),
    role: z.enum(ROLES),
    created_at: timestamp,
    disabled_at: timestamp.nullable().describe('set while it is disabled: its tokens are refused (401, reason principal_disabled)'),
    last_disabled_at: timestamp.nullable().describe('its most recent disable, kept by an enable: approvals decided before it stay void'),
    live_tokens: z.number().int().nonnegative().describe('tokens neither revoked nor expired; their values are never shown'),
  })
  .meta({ id: 'PrincipalListing' })

export const principalListSchema = z.object({ principals: z.array(principalListingSchema).describe('oldest first') }).meta({ id: 'PrincipalList' })

/** A disable's or an enable's body: the reason is kept in the audit log; a disable's is required (checked by `statusReason`). */
export const principalStatusRequestSchema = z
  .strictObject({ reason: z.string().max(2000).optional().describe('what it did, or why it is stopped (required for a disable, not blank): kept in the audit log') })
  .meta({ id: 'PrincipalStatusRequest' })

export const principalStatusAnswerSchema = z
  .object({
    principal_id: z.string(),
    name: z.string(),
    role: z.enum(ROLES),
    changed: z.boolean().describe('false when it already stood so: nothing was written'),
    disabled_at: timestamp.nullable().describe('the disable time now standing (null once enabled)'),
    was_disabled_at: timestamp.nullable().describe('the disable time before this call (null: it was enabled)'),
    last_disabled_at: timestamp.nullable().describe('its most recent disable, kept by an enable'),
    live_tokens: z.number().int().nonnegative(),
    enabled_admins_left: z.number().int().nonnegative().describe('0 is allowed, and said: no admin can then use these routes or GET /metrics'),
    reason: z.string().nullable(),
  })
  .meta({ id: 'PrincipalStatusChange' })
