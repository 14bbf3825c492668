#!/usr/bin/env bash
# Installs the Debian packages that tests and the embedded runtime use, only
# when one is missing, so repeated runs cost nothing.
set -euo pipefail
needed=()
command -v nmap >/dev/null || needed+=(nmap)
command -v openssl >/dev/null || needed+=(openssl)
command -v pdftotext >/dev/null || needed+=(poppler-utils)
command -v chromium >/dev/null || needed+=(chromium)
# The README's walk-through (run by test/readme) reads answers with jq and curl.
command -v jq >/dev/null || needed+=(jq)
command -v curl >/dev/null || needed+=(curl)
[ ${#needed[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages: ${needed[*]}; install them with: sudo apt-get install ${needed[*]}" >&2
  exit 1
fi
echo "installing Debian packages: ${needed[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${needed[@]}" >/dev/null
