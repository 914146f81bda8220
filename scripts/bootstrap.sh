#!/usr/bin/env bash
# Set up .venv with the project and its dev tools. Idempotent; safe to rerun.
#
# Torch: an importable torch (in the venv, or in the base Python, e.g. a user's CUDA
# build) is kept as it is. Otherwise torch==2.13.0 is installed first, which on this
# kind of machine is the local CPU wheel, so the project's "torch>=2.1" pulls nothing
# more (no multi-GB CUDA packages). TORCH_SPEC overrides the pin.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"
TORCH_SPEC="${TORCH_SPEC:-torch==2.13.0}"

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "error: Python 3.11 or newer is needed (found: $("$PYTHON" --version 2>&1))" >&2
  exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
  if "$PYTHON" -c 'import torch' 2>/dev/null; then
    echo "bootstrap: reusing the torch of $PYTHON ($("$PYTHON" -c 'import torch; print(torch.__version__)'))"
    "$PYTHON" -m venv --system-site-packages "$VENV"
  else
    "$PYTHON" -m venv "$VENV"
  fi
fi

pip_install() {
  # pip warns about every local index folder that lacks a package; that is noise here.
  "$VENV/bin/python" -m pip --disable-pip-version-check -q install "$@" 2>&1 \
    | { grep -v "is ignored: it is neither a file nor a directory" || true; }
  return "${PIPESTATUS[0]}"
}
# The real-browser test of the web page (tests/web/test_web_browser.py) drives Debian's
# Chromium through its chromedriver; it must run in CI, not be skipped, so install them here.
# Where they cannot be installed (no root, no apt-get) setup goes on, saying so, except under CI.
browser_missing() {
  echo "bootstrap: $1" >&2
  if [ -n "${CI:-}" ]; then
    echo "error: the browser test needs /usr/bin/chromium and /usr/bin/chromedriver" >&2
    exit 1
  fi
  echo "bootstrap: warning: tests/web/test_web_browser.py will be skipped (install chromium and chromium-driver)" >&2
}
install_browser() {
  # Node runs the page's script without a browser (tests/web/test_web_page_script.py)
  if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] && command -v node >/dev/null 2>&1; then
    return 0
  fi
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo -n"
    else
      browser_missing "chromium or chromedriver is missing, and installing them needs root"
      return 0
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    browser_missing "chromium or chromedriver is missing and there is no apt-get to install them"
    return 0
  fi
  echo "bootstrap: installing chromium, chromium-driver and nodejs (Debian packages) for the page's tests"
  $sudo apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium chromium-driver nodejs >/dev/null
  if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    browser_missing "apt-get ran, but /usr/bin/chromium or /usr/bin/chromedriver is still missing"
  fi
}
install_browser

if ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
  echo "bootstrap: installing $TORCH_SPEC"
  pip_install "$TORCH_SPEC"
fi
# The exact versions the committed results were made with (requirements/lock-cpu.txt), as
# constraints: what the project asks for, at those versions; LOCK=0 takes the newest instead.
constraints=()
if [ "${LOCK:-1}" != 0 ] && [ -f requirements/lock-cpu.txt ]; then
  constraints=(-c requirements/lock-cpu.txt)
fi
echo "bootstrap: installing pasur and its dev tools${constraints[*]:+ (versions of requirements/lock-cpu.txt)}"
pip_install -e ".[dev]" "${constraints[@]}"
"$VENV/bin/python" -c 'import torch, pasur; print(f"bootstrap: ready (torch {torch.__version__}, cuda available: {torch.cuda.is_available()})")'
touch "$VENV/.installed"
