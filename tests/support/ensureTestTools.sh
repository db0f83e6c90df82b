#!/usr/bin/env bash
# `npm test` runs this first: what the tests need beyond Node.js, installed as root on Debian when
# missing (never skipped):
#   promtool, prometheus (package prometheus)   lint /metrics/ and the alert rules, scrape the cluster
#   nginx                             the gateway of the cluster tests (tests/deploy), `nginx -t`
#   systemd-analyze (package systemd) verifies deploy/systemd
#   tmux                              the bic client's terminal (progress bar, password prompt) tests
#   chromium                          the web catalogue's browser tests (tests/web, playwright-core)
#   python3 nibabel, tifffile, zarr, numpy   write and read the real format test files (tests/formats)
set -euo pipefail
missing=()
command -v "${PROMTOOL:-promtool}" >/dev/null 2>&1 || missing+=(prometheus)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v "${NGINX:-nginx}" >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
for package in python3-nibabel python3-tifffile python3-zarr python3-numpy; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing for the tests (Debian packages): ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
echo "missing for the tests: ${missing[*]} (Debian: apt-get install ${missing[*]})" >&2
exit 1
