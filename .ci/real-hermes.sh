#!/usr/bin/env bash
# The reference Bridge and Hermes Agent's own API server on a real Hermes Agent
# (examples/hermes-bridge: RealHermesBridgeTest, RealHermesApiServerTest), inside a loopback-only network
# namespace so that nothing Hermes tries can leave the machine.
#
# Environment:
#   PARLEY_HERMES_SRC           Hermes Agent's source: a .tar.gz, or a directory holding run_agent.py
#   PARLEY_HERMES_WHEELS        ':'-separated folders of wheels for Hermes' Python dependencies (installed with
#                               pip --no-index; default: the local folders this machine's pip configuration names)
#   PARLEY_REQUIRE_REAL_HERMES  true: anything missing fails this script (CI); otherwise it is skipped, with one line
#
# Needs root (ip netns), Python 3.11 to 3.13, and Maven and a JDK 17. Maven resolves what the tests need first,
# outside the namespace; inside it runs offline.
set -euo pipefail
cd "$(dirname "$0")/.."

required=false
if [ "${PARLEY_REQUIRE_REAL_HERMES:-}" = "true" ]; then required=true; fi

unavailable() {
  if $required; then
    echo "ERROR: the real Hermes tests are required (PARLEY_REQUIRE_REAL_HERMES=true) and cannot run: $*" >&2
    exit 1
  fi
  echo "Real Hermes tests skipped: $* (see examples/hermes-bridge/README.md, \"Against a real Hermes\")"
  exit 0
}

apt_install() {
  [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1 || return 1
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null || true
  apt-get install -y -q --no-install-recommends "$@" >/dev/null
}

started=$(date +%s)
echo "== real Hermes: checking what it needs"
[ -n "${PARLEY_HERMES_SRC:-}" ] || unavailable "PARLEY_HERMES_SRC (Hermes Agent's source) is not set"
[ -e "$PARLEY_HERMES_SRC" ] || unavailable "PARLEY_HERMES_SRC=$PARLEY_HERMES_SRC does not exist"
[ "$(id -u)" = "0" ] || unavailable "a network namespace needs root (ip netns)"
command -v ip >/dev/null 2>&1 || apt_install iproute2 || unavailable "the ip command (iproute2) is missing"

base_python=""
for candidate in /usr/bin/python3 python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] < (3, 14) else 1)' 2>/dev/null; then
    base_python=$(command -v "$candidate")
    break
  fi
done
[ -n "$base_python" ] || unavailable "Hermes Agent needs Python 3.11 to 3.13, and there is none"

work=$(mktemp -d /tmp/parley-real-hermes.XXXXXX)
ns="parley-hermes-$$"
cleanup() {
  if [ -e "/run/netns/$ns" ]; then
    # only processes of this namespace, which this script started
    for pid in $(ip netns pids "$ns"); do kill "$pid" 2>/dev/null || true; done
    sleep 1
    for pid in $(ip netns pids "$ns"); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== real Hermes: its source"
if [ -d "$PARLEY_HERMES_SRC" ]; then
  source_dir=$(cd "$PARLEY_HERMES_SRC" && pwd)
else
  mkdir -p "$work/src"
  tar -xzf "$PARLEY_HERMES_SRC" -C "$work/src"
  source_dir=$(dirname "$(find "$work/src" -maxdepth 2 -name run_agent.py -print -quit)")
fi
[ -f "$source_dir/run_agent.py" ] || unavailable "$PARLEY_HERMES_SRC holds no run_agent.py"
echo "Hermes Agent source: $source_dir ($(sed -n 's/^version = "\(.*\)"/\1/p' "$source_dir/pyproject.toml" 2>/dev/null | head -n 1))"

echo "== real Hermes: a Python environment from local wheels ($base_python)"
if ! "$base_python" -m venv "$work/venv" 2>/dev/null; then
  rm -rf "$work/venv"
  apt_install python3-venv || unavailable "$base_python cannot make a virtual environment (install python3-venv)"
  "$base_python" -m venv "$work/venv"
fi
wheels="${PARLEY_HERMES_WHEELS:-}"
if [ -z "$wheels" ]; then
  # the machine's pip configuration: file://…/simple indexes (their wheels lie in …/files) and find-links folders
  wheels=$("$work/venv/bin/pip" config list 2>/dev/null \
    | sed -n "s/^[^=]*\(index-url\|find-links\)='\(.*\)'\$/\2/p" | tr ' ' '\n' | while read -r entry; do
        case "$entry" in
          file://*) folder="${entry#file://}"; folder="${folder%/}"; folder="${folder%/simple}/files" ;;
          /*) folder="$entry" ;;
          *) continue ;;
        esac
        if [ -d "$folder" ]; then echo "$folder"; fi
      done | awk '!seen[$0]++' | paste -sd: -)
fi
[ -n "$wheels" ] || unavailable "no folder of wheels: set PARLEY_HERMES_WHEELS (pip's configuration names none)"
find_links=()
IFS=: read -r -a folders <<< "$wheels"
for folder in "${folders[@]}"; do find_links+=(--find-links "$folder"); done
echo "wheels from: $wheels"
# Hermes' core dependencies (pyproject.toml) and what its gateway's API server needs
if ! "$work/venv/bin/pip" install -q --disable-pip-version-check --no-index "${find_links[@]}" \
    "openai<3" certifi python-dotenv httpx rich tenacity pyyaml ruamel.yaml requests jinja2 pydantic \
    prompt_toolkit croniter packaging Markdown "PyJWT[crypto]" urllib3 cryptography psutil websockets \
    pathspec fastapi uvicorn python-multipart ptyprocess Pillow aiohttp; then
  unavailable "Hermes' Python dependencies are not all in $wheels"
fi
echo "== real Hermes: Maven resolves what the tests need (outside the namespace, where they skip)"
# Surefire resolves its JUnit provider only when some test matches: the same command as below, without Hermes.
if ! env -u PARLEY_HERMES_SRC -u PARLEY_HERMES_PYTHON -u PARLEY_REQUIRE_REAL_HERMES \
    mvn -B -pl examples/hermes-bridge -am test-compile surefire:test -Dtest='RealHermes*Test' \
    -Dsurefire.failIfNoSpecifiedTests=false > "$work/resolve.log" 2>&1; then
  cat "$work/resolve.log"
  echo "ERROR: Maven could not build or resolve the tests' dependencies" >&2
  exit 1
fi

echo "== real Hermes: a loopback-only network namespace ($ns)"
ip netns add "$ns" || unavailable "ip netns add failed"
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" env PYTHONPATH="$source_dir" PYTHONDONTWRITEBYTECODE=1 HERMES_HOME="$work/import-check" \
  "$work/venv/bin/python" -c 'import run_agent' || unavailable "Hermes Agent does not import with these packages"

echo "== real Hermes: the tests, inside it (mvn -o)"
status=0
ip netns exec "$ns" env PARLEY_HERMES_SRC="$source_dir" PARLEY_HERMES_PYTHON="$work/venv/bin/python" \
  PARLEY_REQUIRE_REAL_HERMES=true \
  mvn -o -B -pl examples/hermes-bridge -am test-compile surefire:test -Dtest='RealHermes*Test' \
  -Dsurefire.failIfNoSpecifiedTests=false -Dsurefire.timeout=300 || status=$?
if [ "$status" != "0" ]; then
  logs=$(ls -dt examples/hermes-bridge/target/real-hermes/run-* 2>/dev/null | head -n 1 || true)
  if [ -n "$logs" ]; then
    for log in "$logs/bridge/bridge.log" "$logs/api-server.log"; do
      if [ -f "$log" ]; then echo "== the last lines of $log"; tail -n 80 "$log"; fi
    done
  fi
fi
echo "== real Hermes: done in $(( $(date +%s) - started )) s (exit $status)"
exit "$status"
