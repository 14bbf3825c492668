#!/bin/sh
exec node "$(dirname "$0")/zap.cjs" "$@"
