#!/usr/bin/env bash
# Set up Privacy Parameter Studio and run it.
#   scripts/studio.sh app    install what is missing, then start the app on the built-in demo data
#   scripts/studio.sh test   install what is missing (including Chromium), then run the whole test suite
#   scripts/studio.sh bench  install what is missing, then run the benchmarks
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
PY="$VENV/bin/python"

setup_python() {
  local reqs=$1
  [ -x "$PY" ] || python3 -m venv "$VENV"
  # Install only when the requirement files changed since the last successful install.
  local want stamp="$VENV/.installed-$reqs"
  want=$(cat requirements*.txt | sha256sum)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$PY" -m pip install --quiet --disable-pip-version-check -r "$reqs"
    echo "$want" > "$stamp"
  fi
}

compile_kernels() {
  # The attacks' numba kernels, compiled once per installation (cached in engine/attacks/__pycache__) instead of
  # by the first attack of every new process: engine/attacks/precompile.py. Again only when their source changed.
  local want stamp="$VENV/.compiled-kernels"
  # numba's cache is keyed on the source files' times too: a checkout that rewrites them is compiled again.
  want=$( (cat engine/attacks/_l1.py engine/attacks/_chebyshev.py requirements.txt;
           stat -c %Y engine/attacks/_l1.py engine/attacks/_chebyshev.py) | sha256sum)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$PY" -m engine.attacks.precompile
    echo "$want" > "$stamp"
  fi
}

ensure_chromium() {
  if command -v chromium >/dev/null 2>&1; then return; fi
  echo "Installing Chromium (Debian package) for the browser test..." >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
}

case "${1:-}" in
  app)
    shift
    setup_python requirements.txt
    compile_kernels
    exec "$PY" -m ui.serve "$@"  # streamlit run app.py, without the legacy page router (ui/serve.py)
    ;;
  test)
    shift
    setup_python requirements-test.txt
    compile_kernels
    ensure_chromium
    # Both cores; tests of one module share a worker, so module-scoped fixtures (the browser test's server) run once.
    # Modules are handed out in collection order (tests/app, tests/e2e, tests/engine, ..., the doctests), not
    # largest first: xdist's default puts the browser modules, which have few tests but take the longest, at the
    # end, where one worker finished 9-12 s before the other (the runs took 167.1 and 171.8 s); in collection order
    # the two workers finished within a second of each other (the runs took 149.7 and 158.1 s; same machine, same
    # code, the runs interleaved).
    exec "$PY" -m pytest -n auto --dist loadscope --no-loadscope-reorder "$@"
    ;;
  bench)
    shift
    setup_python requirements-test.txt
    compile_kernels
    exec "$PY" benchmarks/run.py "$@"
    ;;
  *)
    echo "usage: scripts/studio.sh app|test|bench" >&2
    exit 2
    ;;
esac
