export { openGateway, type Gateway, type GatewayOptions } from './gateway.js'
export { createLogger, type Logger } from './logger.js'
export { PRUNE_ACTION, sweepRetention } from './retention-sweep.js'
