#!/usr/bin/env node
import { main } from './main.js'

main(process.argv).then((code) => {
  if (code !== 0) process.exitCode = code
})
