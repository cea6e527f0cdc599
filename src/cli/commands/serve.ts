import { serve } from '@hono/node-server'
import type { Command } from 'commander'
import { answerClientErrors, createApp, createMetricsApp } from '../../api/index.js'
import type { IssueOptions } from '../../auth/index.js'
import type { WarrantConfig } from '../../config/index.js'
import { WarrantError } from '../../contract/index.js'
import type { Gateway } from '../../gateway/index.js'
import { invocation } from '../invocation.js'
import { openCliGateway } from '../open-cli-gateway.js'
import { shellWord } from '../shell-word.js'

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the gateway: HTTP API, OpenAPI document, MCP endpoint and review pages')
    .option('-c, --config <file>', 'config file (YAML or JSON); default: ./warrant.yaml, else the bundled demo')
    .option('-p, --port <n>', 'port (default: from the config, 8787)', (v) => parsePort(v))
    .option('--host <host>', 'interface to listen on (default: from the config, 127.0.0.1)')
    .action(async (flags: { config?: string; port?: number; host?: string }) => {
      const { gateway, config, demo, configPath } = await openCliGateway({ config: flags.config, logLevel: 'info', executors: true })
      const firstTokens = (await gateway.principals.count()) === 0 ? await issueDemoTokens(gateway, config) : null
      const app = createApp({ gateway })
      const host = flags.host ?? config.server.host
      const port = flags.port ?? config.server.port
      // metrics without a token: on their own port, loopback unless the config says otherwise
      const metricsHost = config.server.metrics_host
      // Both servers say why they cannot listen (port in use, no such interface) instead of crashing.
      const listening = (started: ReturnType<typeof serve>, h: string, p: number) =>
        new Promise<{ port: number }>((resolve, reject) => {
          started.once('listening', () => resolve(started.address() as { port: number }))
          started.once('error', (error: NodeJS.ErrnoException) => reject(listenRefusal(error, h, p)))
        })
      let metrics: { server: ReturnType<typeof serve>; url: string } | null = null
      let server: ReturnType<typeof serve>
      let info: { port: number }
      try {
        if (config.server.metrics_port !== undefined) {
          const started = serve({ fetch: createMetricsApp(gateway).fetch, hostname: metricsHost, port: config.server.metrics_port })
          answerClientErrors(started)
          const bound = await listening(started, metricsHost, config.server.metrics_port)
          metrics = { server: started, url: `http://${metricsHost.includes(':') ? `[${metricsHost}]` : metricsHost}:${bound.port}/metrics` }
        }
        server = serve({ fetch: app.fetch, hostname: host, port })
        answerClientErrors(server)
        info = await listening(server, host, port)
        gateway.listeningAt({ host, port: info.port })
      } catch (error) {
        metrics?.server.close()
        await gateway.close()
        throw error
      }
      const metricsServer = metrics?.server ?? null
      {
        const base = config.server.public_url ?? `http://${host.includes(':') ? `[${host}]` : host}:${info.port}`
        // a token lands in the store of the config it is created with: the one this server runs on, unless the demo; the
        // command is the one this server was started by (`npm start`, an installed `warrant`, `node bin/warrant.js`)
        const tokenCreate = (args: string) => `${invocation()} token create ${args}${demo ? '' : ` --config ${shellWord(configPath)}`}`
        const out = [
          '',
          `Warrant is serving ${demo ? 'the bundled demo' : configPath}`,
          `  store:     ${gateway.store.url}`,
          `  resources: ${gateway.catalogue.list().map((r) => `${r.name} → ${r.environment}`).join('; ')}`,
          `  API:       ${base}/v1/resources`,
          `  OpenAPI:   ${base}/openapi.json`,
          `  review:    ${base}/review`,
          `  health:    ${base}/health`,
          `  metrics:   ${base}/metrics (admin token)${metrics ? `; without a token: ${metrics.url}` : ''}`,
          `             create an admin token: ${tokenCreate('--name NAME --role admin')}`,
          '',
          ...(firstTokens
            ? [
                'Tokens for this fresh store (shown once; only their hashes are kept):',
                `  reviewer: ${firstTokens.reviewer}`,
                `  agent:    ${firstTokens.agent}`,
                `Send one as: Authorization: Bearer <token>. More with: ${tokenCreate('--name NAME --role agent --resources R --actions A')}`,
                '',
              ]
            : [`Authenticate with a bearer token (Authorization: Bearer <token>); create one with: ${tokenCreate('--name NAME --role reviewer')}`, '']),
          // runs as printed: on a fresh store with the agent token just shown, else with $AGENT set to one. No filter:
          // a field named here must be one the first resource declares, and a value one it holds; any config's
          // first resource answers a one-page budget, and says whether that page was all of it.
          `Try: curl -H "Authorization: Bearer ${firstTokens ? firstTokens.agent : '$AGENT'}" -s -X POST ${base}/v1/resources/${gateway.catalogue.names[0] ?? 'RESOURCE'}/search -H 'content-type: application/json' -d '{"budget":{"max_pages":1}}'`,
          '',
        ]
        process.stdout.write(out.join('\n'))
      }
      const stop = async () => {
        metricsServer?.close()
        server.close()
        await gateway.close()
        process.exit(0)
      }
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
    })
}

async function issueDemoTokens(gateway: Gateway, config: WarrantConfig) {
  const resources = Object.keys(config.resources)
  // A principal's name is unique: on a store that already has one (its tokens revoked and removed by hand, say),
  // the start-up token goes to that principal instead of failing the start.
  const mint = async (options: IssueOptions) =>
    (await gateway.principals.exists(options.name)) ? gateway.principals.addToken({ principal: options.name }) : gateway.principals.issue(options)
  const reviewer = await mint({ name: 'first-reviewer', role: 'reviewer' })
  const agent = await mint({ name: 'first-agent', role: 'agent', scopes: { resources, actions: '*' } })
  return { reviewer: reviewer.token, agent: agent.token }
}

function parsePort(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new WarrantError('invalid_request', `--port must be a whole number from 0 to 65535, not "${value}"`)
  return n
}

/** Why the server could not listen, in words and with what to do: never a Node stack trace. */
function listenRefusal(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error.code === 'EADDRINUSE')
    return new WarrantError('invalid_request', `port ${port} on ${host} is already in use (another warrant serve?); choose another with --port N, or --port 0 for any free port`, { port, host })
  if (error.code === 'EACCES') return new WarrantError('invalid_request', `not allowed to listen on port ${port} on ${host}; choose a port above 1023 with --port N`, { port, host })
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
    return new WarrantError('invalid_request', `cannot listen on ${host}: no such interface on this machine; use --host 127.0.0.1 or --host 0.0.0.0`, { host })
  return error
}
