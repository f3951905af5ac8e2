#!/usr/bin/env bash
# Fetches the Claude Code CLI from npm (pinned) for the end-to-end hook tests
# (crates/engram-cli/tests/claude_code.rs), into ~/.cache/engram/claude-code, or
# $ENGRAM_CLAUDE_CODE_DIR. The package is a native binary (~370 MB), fetched once;
# its postinstall is not needed (the tests run the binary directly).
set -euo pipefail
CLAUDE_CODE_VERSION=2.1.328
dir="${ENGRAM_CLAUDE_CODE_DIR:-$HOME/.cache/engram/claude-code}"
bin="$dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null | cut -d' ' -f1)" = "$CLAUDE_CODE_VERSION" ]; then
  echo "Claude Code $CLAUDE_CODE_VERSION: present"
  exit 0
fi
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"private": true}' >package.json
npm install --no-audit --no-fund --loglevel=error --ignore-scripts "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"
"$bin" --version
