export { checkResource, type CheckOptions } from './check-resource.js'
export { verdictOf, type CheckReport, type Guarantee, type GuaranteeStatus } from './guarantee.js'
export { renderCheckReport, CHECK_EXIT_CODES } from './render-report.js'
export { writeProbeName } from './write-probe.js'
