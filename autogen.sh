#!/bin/sh
# Regenerate the build system; run once after a fresh clone.
set -e
cd "$(dirname "$0")"
autoreconf --force --install --symlink
echo "Now run ./configure (see ./configure --help)."
