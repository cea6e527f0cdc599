import { createHash, randomUUID } from 'node:crypto'
import { readFileSync, readlinkSync } from 'node:fs'
import { hostname } from 'node:os'

/**
 * Lease owners of this machine (an executor's operation lease, a builder's lease on the selection it freezes). A default owner name is `host:pid:random:machine`, where `machine` hashes the
 * kernel's boot id and this process's PID namespace: two owners with the same host and machine part see the same
 * process table, so a pid that no longer runs proves the owner is gone (it was killed or crashed) and its leases
 * can be taken at once instead of after they expire. Anything less certain (another host, another container,
 * another boot, no /proc) waits for the lease to expire as before; a pid reused by another process only delays.
 */

const machine = machineKey()

/** This process's default lease-owner name. */
export function defaultOwner(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}${machine ? `:${machine}` : ''}`
}

/** The owners in `owners` that are processes of this machine no longer running. */
export function deadLocalOwners(owners: readonly string[], alive: (pid: number) => boolean = pidAlive): string[] {
  if (!machine) return []
  const host = hostname()
  return owners.filter((owner) => {
    const parts = owner.split(':')
    if (parts.length !== 4 || parts[0] !== host || parts[3] !== machine || parts[1] === String(process.pid)) return false
    const pid = Number(parts[1])
    return Number.isSafeInteger(pid) && pid > 0 && !alive(pid)
  })
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

function machineKey(): string {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    const pidNamespace = readlinkSafe('/proc/self/ns/pid')
    if (!boot || !pidNamespace) return ''
    return createHash('sha256').update(`${boot}\n${pidNamespace}`).digest('hex').slice(0, 12)
  } catch {
    return ''
  }
}

function readlinkSafe(path: string): string {
  try {
    return readlinkSync(path)
  } catch {
    return ''
  }
}
