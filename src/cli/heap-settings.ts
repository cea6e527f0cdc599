import { setFlagsFromString } from 'node:v8'

/**
 * V8 settings for a Warrant process, applied before any other module of the CLI is evaluated (bin.ts imports
 * this first).
 *
 * No allocation-site pretenuring: a walk holds each page's rows across the awaits of its store writes, so V8
 * can judge those allocation sites long-lived and allocate every later row straight into the old generation,
 * where it stays as garbage until the next full collection. Whether it does depends on when the first
 * scavenges fall, so the same freeze of 100,000 members peaked at 151 or 223 MB (compiled, bimodal), and at
 * 1,000,000 members 234 MB; without pretenuring 150-157 MB every run, and no slower (bench/RESULTS.md).
 * Nothing Warrant keeps is built at a rate that pretenuring would help.
 */
setFlagsFromString('--no-allocation-site-pretenuring')
