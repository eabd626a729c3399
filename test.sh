#!/usr/bin/env bash
# The test command: installs what the tests need, then runs every test of the workspace.
#
#   ./test.sh                 # every test (cargo test --workspace --locked), then the cost bar
#   ./test.sh -p tether-plan  # with arguments: cargo test --locked ARGUMENTS
#
# Installs only what is missing, so a second run goes straight to the tests:
# - system programs the tests start: script(1) for the pseudo-terminal tests, kill, git,
#   python3, zsh, fish and groff (the completion scripts and the manual page are checked with
#   them), and headless Chromium with its WebDriver (Debian's chromium and chromium-driver)
#   for the dashboard's browser tests (with apt-get; through sudo when not root);
# - PostgreSQL's server binaries (Debian's postgresql) for the team store's tests, which start a
#   throwaway cluster of their own, and as root an unprivileged user to run it (`initdb` refuses
#   root): `tether-pg`, created with useradd;
# - the official Python MCP SDK (`mcp>=2,<3`, the independent client of the `tether mcp` tests)
#   and aiosmtpd (the real SMTP server of the email sink's tests, with STARTTLS) into a virtual
#   environment under the target directory, never into the system's Python; openssl (the
#   email tests make their certificates with it);
# - the real Claude Code CLI (npm `@anthropic-ai/claude-code`) under target/npm-cli, with Node 22
#   (npm `node@22`) next to it when the machine's Node is older: Claude Code's current releases
#   need Node 22 to install (with an older one npm silently picks an old release);
# - the real Codex CLI (npm `@openai/codex`, plain npm: its native binary comes as an optional
#   dependency from the same registry) under target/npm-cli/codex;
# - the real pi coding agent (npm `@earendil-works/pi-coding-agent`) under target/npm-cli/pi,
#   unpacked with `npm pack` (a plain install fails where the registry lacks one of its
#   dependencies; its command is self-contained but for jiti, installed beside it) and run by
#   Node 22 through bin/pi;
# - Qwen Code (npm `@qwen-code/qwen-code`) under target/npm-cli/qwen, run by Node 22 through
#   bin/qwen (it needs Node 22);
# - opencode (npm `opencode-ai`, its native binary as an optional dependency) under
#   target/npm-cli/opencode;
# - the ACP adapters of Claude Code and Codex (npm `@zed-industries/claude-agent-acp`, run with
#   Node 22 through bin/claude-agent-acp, and `@zed-industries/codex-acp`, its native binary)
#   under target/npm-cli/claude-acp and target/npm-cli/codex-acp;
# - the real Gemini CLI (npm `@google/gemini-cli`) under target/npm-cli/gemini, run by Node 22
#   through bin/gemini;
# - the real GitHub Copilot CLI (npm `@github/copilot`, its native binary an optional dependency
#   from the same registry) under target/npm-cli/copilot.
# Then runs `cargo test --workspace --locked` (and, for a whole run, the cost benchmark and the
# fleet benchmark with their bars: `cargo bench -p tether --bench goal_cost`, `--bench fleet`) with PYTHON naming that environment's interpreter,
# TETHER_TEST_CLAUDE the Claude Code binary, TETHER_TEST_CODEX the Codex one and TETHER_TEST_PI
# the pi one, TETHER_TEST_CLAUDE_ACP and TETHER_TEST_CODEX_ACP the ACP adapters, and TETHER_TEST_PG_BIN the directory of PostgreSQL's initdb and pg_ctl.
# TETHER_TEST_QWEN names Qwen Code's bin/qwen, TETHER_TEST_OPENCODE opencode's binary.
# TETHER_TEST_GEMINI names the Gemini CLI, TETHER_TEST_COPILOT the Copilot CLI.
# Formatting and lints are not part of it: `.ci/run` checks them before calling this script.
set -euo pipefail
cd "$(dirname "$0")"

target="${CARGO_TARGET_DIR:-target}"
venv="$target/test-venv"
py="$venv/bin/python"

say() { printf 'test.sh: %s\n' "$*" >&2; }

apt_install() {
  local sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  say "installing $* (apt-get)"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

system_packages() {
  local need=()
  type -P script >/dev/null || need+=(bsdutils)
  type -P kill >/dev/null || need+=(procps)
  type -P git >/dev/null || need+=(git)
  type -P python3 >/dev/null || need+=(python3 python3-venv)
  type -P chromium >/dev/null || need+=(chromium)
  type -P chromedriver >/dev/null || need+=(chromium-driver)
  type -P openssl >/dev/null || need+=(openssl)
  type -P zsh >/dev/null || need+=(zsh)
  type -P fish >/dev/null || need+=(fish)
  type -P groff >/dev/null || need+=(groff-base)
  if [ ${#need[@]} -gt 0 ]; then
    apt_install "${need[@]}"
  fi
}

# PostgreSQL's binaries: on Debian in /usr/lib/postgresql/<version>/bin, not on PATH.
pg_bin_dir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
    echo "$dir"
  elif type -P initdb >/dev/null; then
    dirname "$(type -P initdb)"
  fi
}

postgres() {
  pg_bin="$(pg_bin_dir)"
  if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/pg_ctl" ]; then
    # Only the binaries: no system cluster, so no service starts on install (postgresql-common
    # reads its createcluster.d; a file of ours there conflicts with none of the package's).
    local conf=/etc/postgresql-common/createcluster.d/tether-tests.conf sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    if [ ! -e "$conf" ]; then
      $sudo_cmd mkdir -p "$(dirname "$conf")"
      echo 'create_main_cluster = false' | $sudo_cmd tee "$conf" >/dev/null
    fi
    apt_install postgresql
    pg_bin="$(pg_bin_dir)"
  fi
  if [ "$(id -u)" -eq 0 ] && ! id -u tether-pg >/dev/null 2>&1; then
    say "creating the user tether-pg, which runs the tests' PostgreSQL clusters"
    useradd --system --no-create-home --shell /usr/sbin/nologin tether-pg
  fi
}

# A virtual environment whose interpreter runs; Debian's python3 needs python3-venv for it.
python_venv() {
  if "$py" -c '' 2>/dev/null; then
    return
  fi
  rm -rf "$venv"
  mkdir -p "$target"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    apt_install python3-venv
    python3 -m venv "$venv"
  fi
}

mcp_sdk() {
  local has_mcp2='import importlib.metadata as m, sys; sys.exit(not m.version("mcp").startswith("2."))'
  if ! "$py" -c "$has_mcp2" 2>/dev/null; then
    say "installing the Python MCP SDK into $venv"
    "$py" -m pip install --quiet --disable-pip-version-check "mcp>=2,<3"
  fi
}

smtp_server() {
  if ! "$py" -c 'import aiosmtpd' 2>/dev/null; then
    say "installing aiosmtpd into $venv"
    "$py" -m pip install --quiet --disable-pip-version-check "aiosmtpd>=1.4,<2"
  fi
}

node_major() { "$1" -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null; }

# Node 22 or newer for npm: the machine's, or node@22 installed beside the CLIs.
node_bin_dir() {
  if type -P node >/dev/null && [ "$(node_major node)" -ge 22 ] 2>/dev/null; then
    dirname "$(type -P node)"
    return
  fi
  local dir="$npm_cli/node22/node_modules/node/bin"
  if [ "$(node_major "$dir/node")" != "22" ]; then
    type -P npm >/dev/null || apt_install npm
    say "installing Node 22 (npm node@22) into $npm_cli/node22"
    npm install --silent --no-audit --no-fund --prefix "$npm_cli/node22" node@22 >&2
  fi
  echo "$dir"
}

claude_cli() {
  claude="$npm_cli/claude/node_modules/.bin/claude"
  if ! "$claude" --version >/dev/null 2>&1; then
    local bin
    bin="$(node_bin_dir)"
    say "installing Claude Code (npm @anthropic-ai/claude-code) into $npm_cli/claude"
    PATH="$bin:$PATH" npm install --silent --no-audit --no-fund --prefix "$npm_cli/claude" \
      @anthropic-ai/claude-code >&2
    "$claude" --version >/dev/null
  fi
}

codex_cli() {
  codex="$npm_cli/codex/node_modules/.bin/codex"
  if ! "$codex" --version >/dev/null 2>&1; then
    type -P npm >/dev/null || apt_install npm
    say "installing the Codex CLI (npm @openai/codex) into $npm_cli/codex"
    npm install --silent --no-audit --no-fund --prefix "$npm_cli/codex" @openai/codex >&2
    "$codex" --version >/dev/null
  fi
}

# pi: the package unpacked into $npm_cli/pi/package and bin/pi running its bundled command with
# Node 22 (a machine's Node 20 would make npm pick an old release, and pi 1.x needs 22); beside
# it the one dependency the bundle loads at run time, jiti (extensions: tether's ask_before gate).
pi_cli() {
  local dir="$npm_cli/pi"
  pi="$dir/bin/pi"
  if ! "$pi" --version >/dev/null 2>&1 || [ ! -d "$dir/node_modules/jiti" ]; then
    local bin jiti
    bin="$(cd "$(node_bin_dir)" && pwd)"
    say "installing pi (npm pack @earendil-works/pi-coding-agent) into $dir"
    rm -rf "$dir"
    mkdir -p "$dir/bin"
    (cd "$dir" && PATH="$bin:$PATH" npm pack --silent @earendil-works/pi-coding-agent >/dev/null \
      && tar xzf earendil-works-pi-coding-agent-*.tgz && rm earendil-works-pi-coding-agent-*.tgz)
    jiti="$("$bin/node" -p "require('$dir/package/package.json').dependencies.jiti")"
    PATH="$bin:$PATH" npm install --silent --no-audit --no-fund --prefix "$dir" "jiti@$jiti" >&2
    printf '#!/bin/sh\nexec "%s/node" "%s/package/dist/bundle/cli.js" "$@"\n' "$bin" "$dir" >"$pi"
    chmod +x "$pi"
    "$pi" --version >/dev/null
  fi
}

# Qwen Code: installed with Node 22 first on PATH, and bin/qwen running its command with Node 22.
qwen_cli() {
  local dir="$npm_cli/qwen" bin
  qwen="$dir/bin/qwen"
  if ! "$qwen" --version >/dev/null 2>&1; then
    bin="$(cd "$(node_bin_dir)" && pwd)"
    say "installing Qwen Code (npm @qwen-code/qwen-code) into $dir"
    PATH="$bin:$PATH" npm install --silent --no-audit --no-fund --prefix "$dir" \
      @qwen-code/qwen-code >&2
    mkdir -p "$dir/bin"
    printf '#!/bin/sh\nexec "%s/node" "%s/node_modules/@qwen-code/qwen-code/cli-entry.js" "$@"\n' \
      "$bin" "$dir" >"$qwen"
    chmod +x "$qwen"
    "$qwen" --version >/dev/null
  fi
}

# opencode: its native binary itself (npm's wrapper, killed alone, would orphan it).
opencode_cli() {
  local dir="$npm_cli/opencode"
  opencode="$dir/node_modules/opencode-linux-x64/bin/opencode"
  if ! "$opencode" --version >/dev/null 2>&1; then
    type -P npm >/dev/null || apt_install npm
    say "installing opencode (npm opencode-ai) into $dir"
    npm install --silent --no-audit --no-fund --prefix "$dir" opencode-ai >&2
    "$opencode" --version >/dev/null
  fi
}

# The ACP adapters of Claude Code and Codex (npm @zed-industries/claude-agent-acp and
# @zed-industries/codex-acp): Claude's through bin/claude-agent-acp running it with Node 22 first
# on PATH (the Claude Code it starts needs it); Codex's native binary itself (its npm wrapper,
# killed alone, would orphan it).
acp_adapters() {
  local dir="$npm_cli/claude-acp" bin
  claude_acp="$dir/bin/claude-agent-acp"
  if ! [ -x "$claude_acp" ] || ! [ -f "$dir/node_modules/@zed-industries/claude-agent-acp/dist/index.js" ]; then
    bin="$(cd "$(node_bin_dir)" && pwd)"
    say "installing Claude Code's ACP adapter (npm @zed-industries/claude-agent-acp) into $dir"
    PATH="$bin:$PATH" npm install --silent --no-audit --no-fund --prefix "$dir" \
      @zed-industries/claude-agent-acp >&2
    mkdir -p "$dir/bin"
    printf '#!/bin/sh\nPATH="%s:$PATH" exec "%s/node" "%s/node_modules/@zed-industries/claude-agent-acp/dist/index.js" "$@"\n' \
      "$bin" "$bin" "$dir" >"$claude_acp"
    chmod +x "$claude_acp"
  fi
  dir="$npm_cli/codex-acp"
  codex_acp="$dir/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp"
  if ! [ -x "$codex_acp" ]; then
    type -P npm >/dev/null || apt_install npm
    say "installing Codex's ACP adapter (npm @zed-industries/codex-acp) into $dir"
    npm install --silent --no-audit --no-fund --prefix "$dir" @zed-industries/codex-acp >&2
    [ -x "$codex_acp" ]
  fi
}

# Gemini CLI: installed with Node 22 first on PATH and run by it through bin/gemini.
gemini_cli() {
  local dir="$npm_cli/gemini" bin
  gemini="$dir/bin/gemini"
  if ! "$gemini" --version >/dev/null 2>&1; then
    bin="$(cd "$(node_bin_dir)" && pwd)"
    say "installing Gemini CLI (npm @google/gemini-cli) into $dir"
    PATH="$bin:$PATH" npm install --silent --no-audit --no-fund --prefix "$dir" \
      @google/gemini-cli >&2
    mkdir -p "$dir/bin"
    printf '#!/bin/sh\nexec "%s/node" "%s/node_modules/@google/gemini-cli/bundle/gemini.js" "$@"\n' \
      "$bin" "$dir" >"$gemini"
    chmod +x "$gemini"
    "$gemini" --version >/dev/null
  fi
}

# Copilot CLI: its native binary itself (its npm launcher, killed alone, would orphan it).
copilot_cli() {
  local dir="$npm_cli/copilot"
  copilot="$dir/node_modules/@github/copilot-linux-x64/copilot"
  if ! "$copilot" --version >/dev/null 2>&1; then
    type -P npm >/dev/null || apt_install npm
    say "installing Copilot CLI (npm @github/copilot) into $dir"
    npm install --silent --no-audit --no-fund --prefix "$dir" @github/copilot >&2
    "$copilot" --version >/dev/null
  fi
}

system_packages
postgres
python_venv
mcp_sdk
smtp_server
npm_cli="$(mkdir -p "$target/npm-cli" && cd "$target/npm-cli" && pwd)"
claude_cli
codex_cli
pi_cli
qwen_cli
opencode_cli
acp_adapters
gemini_cli
copilot_cli

PYTHON="$(cd "$(dirname "$py")" && pwd)/$(basename "$py")"
export PYTHON
TETHER_TEST_CLAUDE="$claude"
export TETHER_TEST_CLAUDE
TETHER_TEST_CODEX="$codex"
export TETHER_TEST_CODEX
TETHER_TEST_PI="$pi"
export TETHER_TEST_PI
TETHER_TEST_PG_BIN="$pg_bin"
export TETHER_TEST_PG_BIN
TETHER_TEST_CLAUDE_ACP="$claude_acp"
export TETHER_TEST_CLAUDE_ACP
TETHER_TEST_CODEX_ACP="$codex_acp"
export TETHER_TEST_CODEX_ACP
TETHER_TEST_QWEN="$qwen"
export TETHER_TEST_QWEN
TETHER_TEST_OPENCODE="$opencode"
export TETHER_TEST_OPENCODE
TETHER_TEST_GEMINI="$gemini"
export TETHER_TEST_GEMINI
TETHER_TEST_COPILOT="$copilot"
export TETHER_TEST_COPILOT
[ $# -gt 0 ] || set -- --workspace
cargo test --locked "$@"
# A whole run (as CI makes it) ends with the cost benchmark, which exits non-zero when its bar
# is missed: with Claude Code on both sides, tether costs less per signed-off goal than Claude
# Code's own /goal, in tokens and in dollars (crates/tether/benches/goal_cost.rs); then the
# benchmark of a run of many goals, whose bar is the coordinator's median cost per goal, git
# excluded, under 50 ms (crates/tether/benches/fleet.rs).
if [ "$*" = "--workspace" ]; then
  say "cost per signed-off goal against Claude Code's /goal (cargo bench -p tether --bench goal_cost)"
  cargo bench --locked -p tether --bench goal_cost --profile dev
  say "a run of 20 goals in 5 layers, 1, 2 and 4 at once, then on 1, 2 and 4 workers (cargo bench -p tether --bench fleet)"
  cargo bench --locked -p tether --bench fleet --profile dev
fi
