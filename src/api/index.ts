export { createApp, type App, type AppOptions } from './app.js'
export { toErrorResponse, asWarrantError, fromZodError, errorBodySchema } from './error-mapping.js'
export { createMetricsApp } from './metrics.js'
export { answerClientErrors } from './client-errors.js'
