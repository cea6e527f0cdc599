#!/usr/bin/env bash
# `npm run mutants [group…]`: StrykerJS over the safety guards, one group at a time (see stryker.config.mjs),
# at the lowest priority and one mutant at a time: the machine is shared. Not part of `npm test` or CI.
# Writes reports/mutation/<group>.json and then bench/MUTANTS.md from every report present.
set -uo pipefail
cd "$(dirname "$0")/.."
groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(plans operations executor window batch mcp auth pacer)
for group in "${groups[@]}"; do
  echo "mutants: group ${group}"
  WARRANT_TEST_STORE="${WARRANT_TEST_STORE:-sqlite}" WARRANT_MUTANT_GROUP="$group" nice -n 19 npx stryker run stryker.config.mjs || echo "mutants: group ${group} did not finish"
done
node scripts/mutants-report.mjs
