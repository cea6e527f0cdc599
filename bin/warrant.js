#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm install` through the prepare script).
import('../dist/cli/bin.js')
