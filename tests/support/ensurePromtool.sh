#!/usr/bin/env bash
# `npm test` runs this first: the tests lint /metrics/ and the alert rules with promtool (never
# skipped). Debian ships promtool only in the `prometheus` package; as root it is installed here.
set -euo pipefail
command -v "${PROMTOOL:-promtool}" >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing promtool (Debian package prometheus) for the metrics tests" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  exit 0
fi
echo "promtool is missing: install it (Debian: apt-get install prometheus; or set PROMTOOL to its path)" >&2
exit 1
