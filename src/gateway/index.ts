export { openGateway, type Gateway, type GatewayOptions } from './gateway.js'
export { createLogger, type Logger } from './logger.js'
export { PRUNE_ACTION, sweepRetention } from './retention-sweep.js'
export { scheduleRetentionSweeps, SCHEDULED_SURFACE, type RetentionSchedule } from './retention-schedule.js'
