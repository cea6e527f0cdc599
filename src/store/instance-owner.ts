import { createHash, randomUUID } from 'node:crypto'
import { readFileSync, readlinkSync } from 'node:fs'
import { hostname } from 'node:os'
import { WarrantError } from '../contract/index.js'

/**
 * Lease owners of this machine (an executor's operation lease, a builder's lease on the selection it freezes). A default owner name is `host:pid:random:machine:start`, where `machine` hashes the
 * kernel's boot id and this process's PID namespace, and `start` is the process's start time (clock ticks since
 * boot, /proc/PID/stat): two owners with the same host and machine part see the same process table, so a pid that no
 * longer runs, or now runs a process that started at another time (the pid was reused), proves the owner is gone (it
 * was killed or crashed) and its leases can be taken at once instead of after they expire; and a pid that runs with
 * the same start time proves it alive, whatever its lease says (a blocked event loop lets a lease lapse). Anything
 * less certain (another host, another container, another boot, no /proc, a name without the start of an earlier
 * version) waits for the lease to expire as before.
 */

const machine = machineKey()
const selfStart = machine ? processStart(process.pid) : null

/** This process's default lease-owner name. */
export function defaultOwner(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}${machine ? `:${machine}${selfStart ? `:${selfStart}` : ''}` : ''}`
}

/** Longer is no name a person chose for an instance (a file's contents, a certificate pasted by mistake). */
const MAX_INSTANCE_ID = 128
const UNSHOWABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u

/**
 * This process's lease-owner name, `ID@host:pid:random:machine:start` where an instance id is configured
 * (`WARRANT_INSTANCE_ID`), else the default name. The id names the instance for people (logs, the store); the process
 * part makes the name this process's alone. Two processes given one id (replicas started from one environment file)
 * were one owner: the second took the first's running operation as "its own", declared its writes in flight
 * interrupted, and both executed it. A restart resumes its predecessor's operations at once only where that process
 * is proven gone (`deadLocalOwners`: same machine, pid ended or reused) or released them (a clean stop); elsewhere
 * when their lease expires. An id that is empty, blank, longer than 128 characters or holds control or invisible
 * characters is refused (`invalid_request`, naming `source`).
 */
export function instanceOwner(configured: string | undefined, source = 'WARRANT_INSTANCE_ID'): string {
  if (configured === undefined) return defaultOwner()
  const refuse = (why: string) => new WarrantError('invalid_request', `${source} ${why}: give each instance a short name of its own (e.g. web-1), or unset it`, { field: source })
  if (configured.trim() === '') throw refuse(configured === '' ? 'is empty' : 'holds only white space')
  if (configured.length > MAX_INSTANCE_ID) throw refuse(`is ${configured.length} characters long, more than ${MAX_INSTANCE_ID}`)
  const found = UNSHOWABLE.exec(configured)
  if (found) throw refuse(`holds U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}, a control or invisible character`)
  if (configured.trim() !== configured) throw refuse('begins or ends with white space')
  return `${configured}@${defaultOwner()}`
}

/** A default owner name of a process of this machine (after its instance id, where it has one): its pid, and its start time when the name carries one. */
function localProcess(owner: string): { readonly pid: number; readonly start: string | null } | null {
  if (!machine) return null
  // a host name holds no "@": what precedes the last one is the configured instance id
  const parts = owner.slice(owner.lastIndexOf('@') + 1).split(':')
  if ((parts.length !== 4 && parts.length !== 5) || parts[0] !== hostname() || parts[3] !== machine) return null
  const pid = Number(parts[1])
  if (!Number.isSafeInteger(pid) || pid <= 0) return null
  return { pid, start: parts[4] ?? null }
}

/** The owners in `owners` that are processes of this machine no longer running. */
export function deadLocalOwners(owners: readonly string[], alive: (pid: number) => boolean = pidAlive): string[] {
  return owners.filter((owner) => {
    const local = localProcess(owner)
    if (!local || local.pid === process.pid) return false
    if (!alive(local.pid)) return true
    // the pid runs, but a process that started at another time is not the owner: it died and its pid was reused
    const start = local.start === null ? null : processStart(local.pid)
    return start !== null && start !== local.start
  })
}

/**
 * The owners in `owners` proven to be processes of this machine still running (this one included): the pid runs,
 * and started when the name says, so it is not a reused pid. A name without a start time is never proven alive.
 */
export function liveLocalOwners(owners: readonly string[]): string[] {
  return owners.filter((owner) => {
    const local = localProcess(owner)
    if (!local || local.start === null) return false
    if (local.pid !== process.pid && !pidAlive(local.pid)) return false
    return processStart(local.pid) === local.start
  })
}

/** A process's start time in clock ticks since boot (field 22 of /proc/PID/stat), or null when unreadable. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the command name (field 2) is in parentheses and may hold spaces or parentheses: count after the last ")"
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
    return start && /^\d+$/.test(start) ? start : null
  } catch {
    return null
  }
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
