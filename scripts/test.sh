#!/usr/bin/env bash
# The project's one test command (`npm test`): prepares what the tests need, type-checks, then runs every
# test file on node's own runner. Node 20's --test does not expand globs, so the files are listed.
set -euo pipefail
cd "$(dirname "$0")/.."

# PostgreSQL: the store and connector suites run on it as well as on SQLite.
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "test: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi

# MariaDB: the sql connector suites and a bulk-flow scenario run on it as an upstream (never as the store).
if ! mariadb-admin --protocol=tcp -h 127.0.0.1 -P 3306 -u root ping >/dev/null 2>&1; then
  echo "test: starting MariaDB"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  for _ in $(seq 1 30); do mariadb-admin --protocol=tcp -h 127.0.0.1 -P 3306 -u root ping >/dev/null 2>&1 && break; sleep 1; done
fi

# Chromium for the review-page tests: Debian's build (test tools cannot download browsers here).
if [ ! -x /usr/bin/chromium ]; then
  echo "test: installing Chromium from Debian"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null
fi

# dist/ first: the type-check of the package-exports test resolves 'warrant' to it.
echo "test: building dist/ (the library face the package-exports test imports), then type-checking"
npx tsc -p tsconfig.build.json
npx tsc -p tsconfig.json --noEmit

mapfile -t files < <(find test -name '*.test.ts' | sort)
echo "test: running ${#files[@]} test files"
exec node --import tsx --test --test-concurrency="${WARRANT_TEST_CONCURRENCY:-2}" "${files[@]}"
