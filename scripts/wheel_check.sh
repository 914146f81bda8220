#!/usr/bin/env bash
# The pip route of docs/install.md, checked end to end (issue 45): build the wheel, install it
# into a clean venv with the CPU torch first, then check that no nvidia package came with it, that
# the wheel ships the page and the networks' weights, and that `pasur solve` works from outside the
# checkout, `pasur serve` refuses in one line until the `web` extra is installed, then serves. One line per check; the first failure prints `error: ...` and exits 1.
# Every step is bounded in time; the temporary folder (venv, wheel, database) goes at exit.
#
# PYTHON (default python3) makes the venv; TORCH_SPEC (default torch==2.13.0, as scripts/bootstrap.sh)
# is the torch installed before the wheel; KEEP_WHEEL=1 also copies the wheel into dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

PYTHON="${PYTHON:-python3}"
TORCH_SPEC="${TORCH_SPEC:-torch==2.13.0}"

work=$(mktemp -d "${TMPDIR:-/tmp}/pasur-wheel-check.XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then  # SIGTERM, then SIGKILL after 10 s
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
  cd "$repo"
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "error: $*" >&2
  exit 1
}
# run_logged SECONDS LOG CMD...: run CMD bounded in time, its output to LOG (its tail shown on failure)
run_logged() {
  local seconds=$1 log=$2
  shift 2
  if ! timeout "$seconds" "$@" >"$log" 2>&1; then
    grep -v "is ignored: it is neither a file nor a directory" "$log" | tail -n 20 >&2 || true
    return 1
  fi
}

"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
  || fail "Python 3.11 or newer is needed (PYTHON=$PYTHON)"
venv="$work/venv"
py="$venv/bin/python"
pip=("$py" -m pip --disable-pip-version-check)
run_logged 120 "$work/venv.log" "$PYTHON" -m venv "$venv" || fail "could not create a venv with $PYTHON"
echo "wheel-check: clean venv ($("$py" --version 2>&1)) in $venv"

# 1. the wheel, built from this tree as pip builds it for a user
run_logged 600 "$work/build.log" "${pip[@]}" wheel . --no-deps -w "$work/dist" || fail "pip wheel . failed"
wheels=("$work"/dist/pasur-*.whl)
[ -f "${wheels[0]}" ] || fail "pip wheel made no pasur-*.whl"
wheel=${wheels[0]}
echo "wheel-check: built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) at ${SECONDS} s"
if [ "${KEEP_WHEEL:-0}" = 1 ]; then
  mkdir -p dist && cp "$wheel" dist/
fi

# 2. the package data the page and the agents load: every file the checkout has, in the wheel
"$PYTHON" - "$wheel" "$repo/src" <<'EOF' || fail "the wheel lacks package data (pyproject.toml's [tool.setuptools.package-data])"
import sys, zipfile
from pathlib import Path
wheel, src = sys.argv[1], Path(sys.argv[2])
names = set(zipfile.ZipFile(wheel).namelist())
wanted = [*src.glob("pasur/hidden/*-weights.pt"), *src.glob("pasur/hidden/*-weights.card.json"),
          src / "pasur/web/level-card.json", *(p for p in src.glob("pasur/web/static/**/*") if p.is_file()),
          *src.glob("pasur/solve/native/*.c")]
missing = sorted(str(p.relative_to(src)) for p in wanted if str(p.relative_to(src)) not in names)
weights = [p for p in wanted if p.suffix == ".pt"]
if missing or not weights:
    print("missing from the wheel:", *missing or ["(no *-weights.pt in the checkout)"], file=sys.stderr)
    sys.exit(1)
sources = [p for p in wanted if p.suffix == ".c"]
if not sources:
    sys.exit("no pasur/solve/native/*.c in the checkout")
print(f"wheel-check: the wheel holds the {len(weights)} weights files, their cards, level-card.json, "
      f"the {len(wanted) - 2 * len(weights) - 1 - len(sources)} static files of the page and the CFR kernel's C source")
EOF

# the extras docs/install.md names, declared in the wheel's metadata
"$PYTHON" - "$wheel" <<'EOF' || fail "the wheel lacks extras that docs/install.md names (pyproject.toml's optional-dependencies)"
import re, sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
metadata = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
extras = set(re.findall(r"^Provides-Extra: (\S+)$", metadata, re.M))
missing = sorted({"web", "openspiel", "rl", "docs", "dev"} - extras)
if missing:
    sys.exit(f"missing extras: {', '.join(missing)}")
print(f"wheel-check: the wheel's extras: {', '.join(sorted(extras))}")
EOF

# 3. the install: the CPU torch first (as scripts/bootstrap.sh does), then the wheel, which keeps it
run_logged 600 "$work/torch.log" "${pip[@]}" install "$TORCH_SPEC" || fail "pip install $TORCH_SPEC failed"
run_logged 900 "$work/install.log" "${pip[@]}" install "$wheel" || fail "pip install of the wheel failed"
torch_version=$(timeout 120 "$py" -c 'import torch; print(torch.__version__)') || fail "import torch failed"
echo "wheel-check: installed $TORCH_SPEC, then the wheel (torch $torch_version) at ${SECONDS} s"

"${pip[@]}" list --format=json >"$work/list.json" 2>/dev/null || fail "pip list failed"
"$py" - "$work/list.json" <<'EOF' || fail "nvidia packages were installed (a CUDA torch came in)"
import json, sys
dists = json.load(open(sys.argv[1]))
nvidia = sorted(d["name"] for d in dists if d["name"].lower().startswith("nvidia"))
if nvidia:
    print(*nvidia, file=sys.stderr)
    sys.exit(1)
print(f"wheel-check: {len(dists)} distributions in the venv, none named nvidia*")
EOF

# 4. from a folder outside the checkout, so only the installed package can be imported
outside="$work/outside"
mkdir -p "$outside"
cd "$outside"
location=$(timeout 120 "$py" -c 'import pasur; print(pasur.__file__)') || fail "import pasur failed"
case "$location" in
  "$venv"/*) echo "wheel-check: pasur imports from the venv ($location)" ;;
  *) fail "pasur imports from $location, not from the venv" ;;
esac

timeout 300 "$venv/bin/pasur" solve --seed 3 --json >"$work/solve.json" 2>"$work/solve.err" \
  || { tail -n 20 "$work/solve.err" >&2; fail "pasur solve --seed 3 --json failed"; }
value=$("$py" -c '
import json, numbers, sys
value = json.load(open(sys.argv[1]))["value"]
sys.exit(1) if isinstance(value, bool) or not isinstance(value, numbers.Real) else print(value)' "$work/solve.json") \
  || fail "pasur solve --seed 3 --json gave no numeric value"
echo "wheel-check: pasur solve --seed 3 --json: value $value"

# the native CFR kernel: compiled from the wheel's C source on first use, into a fresh cache
XDG_CACHE_HOME="$work/cache" timeout 300 "$venv/bin/pasur" solve --seed 3 --method dcfr --iterations 5 --kernel native \
  --json >"$work/native.json" 2>"$work/native.err" \
  || { tail -n 20 "$work/native.err" >&2; fail "pasur solve --method dcfr --kernel native failed (is a C compiler installed?)"; }
ls "$work"/cache/pasur/native/*.so >/dev/null 2>&1 || fail "--kernel native left no compiled kernel in the cache"
echo "wheel-check: pasur solve --method dcfr --kernel native: compiled the kernel from the wheel and solved"

# 5. the base install has no web server: `pasur serve` says so in one line, exit 2; then the web extra
serve_code=0
timeout 120 "$venv/bin/pasur" serve --port 8 >"$work/no-web.out" 2>"$work/no-web.err" || serve_code=$?
[ "$serve_code" = 2 ] && grep -q "pip install 'pasur\[web\]'" "$work/no-web.err" \
  || { cat "$work/no-web.err" >&2; fail "pasur serve without the web extra: exit $serve_code, not the one-line refusal"; }
echo "wheel-check: without the web extra, pasur serve refuses in one line: $(head -c 100 "$work/no-web.err")"
run_logged 600 "$work/install-web.log" "${pip[@]}" install "$wheel[web]" || fail "pip install of the wheel's [web] extra failed"
echo "wheel-check: installed the web extra at ${SECONDS} s"

# 6. the page and the API, served by the installed package with a temporary database
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$venv/bin/pasur" serve --host 127.0.0.1 --port "$port" --db "$work/games.sqlite3" --quiet \
  >"$work/serve.log" 2>&1 &
server_pid=$!
timeout 240 "$py" - "$port" "$server_pid" <<'EOF' || { tail -n 20 "$work/serve.log" >&2; fail "pasur serve failed its checks"; }
import json, os, sys, time, urllib.error, urllib.request
base, pid = f"http://127.0.0.1:{sys.argv[1]}", int(sys.argv[2])

def call(path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data, {"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.status, r.read()

deadline = time.monotonic() + 60
while True:
    try:
        status, _ = call("/api/health")
        break
    except (urllib.error.URLError, ConnectionError):
        os.kill(pid, 0)  # the server exited: ProcessLookupError ends the check
        if time.monotonic() > deadline:
            sys.exit("error: /api/health did not answer within 60 s")
        time.sleep(0.5)
print(f"wheel-check: pasur serve on port {sys.argv[1]}: /api/health {status}")
status, page = call("/")
assert status == 200 and b"<html" in page.lower(), (status, page[:200])
print(f"wheel-check: GET / {status} ({len(page)} bytes of the page)")
# the network level plays first as Alex (the policy weights); the best level answers a move (the belief,
# policy and boundary weights)
for level, seat in (("network", "bob"), ("best", "alex")):
    status, raw = call("/api/games", {"level": level, "seat": seat})
    view = json.loads(raw)
    assert status == 201 and view["status"] == "playing", (status, raw[:300])
    if seat == "alex":
        legal = view["hand"]["legal"][0]
        req = urllib.request.Request(f"{base}/api/games/{view['id']}/moves",
                                     json.dumps({"card": legal["card"], "captured": legal["captured"]}).encode(),
                                     {"Content-Type": "application/json", "X-Pasur-Token": view["token"]})
        with urllib.request.urlopen(req, timeout=120) as r:
            status, view = r.status, json.loads(r.read())
    played = view["hand"]["moves_played"]
    assert status in (200, 201) and played >= (1 if seat == "bob" else 2), (status, view)
    print(f"wheel-check: a game against level {level} as {seat}: {status}, {played} moves played")
EOF
cleanup
trap - EXIT
echo "wheel-check: ok (${SECONDS} s, the server stopped and the temporary folder removed)"
