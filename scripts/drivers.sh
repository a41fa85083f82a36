#!/usr/bin/env bash
# Installs the four outside drivers that tests/driver_matrix.rs runs the workload of
# tests/drivers/ with (the fifth, Rust's, is the project's own dependency), and compiles the
# Java and Go programs, once, into a cache folder; prints that folder (SHARDKEY_DRIVERS).
#   python/          pymongo (pip --target)
#   node/            node_modules/mongodb (npm)
#   go/workload-go   tests/drivers/workload.go built with Debian's golang-go and
#                    golang-mongodb-mongo-driver-dev (GOPATH mode: the module proxy is not reached)
#   java/            tests/drivers/Workload.java compiled against Debian's libmongodb-java;
#                    java/classpath holds the class path to run it with
# A driver that cannot be had here gets <driver>/SKIPPED with the reason, which the test
# prints as a skip: nothing is left out silently. Rebuilt when a program's source changes.
set -euo pipefail
cd "$(dirname "$0")/.."
src="$PWD/tests/drivers"
cache="${SHARDKEY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkey}/drivers"
mkdir -p "$cache"/{python,node,go,java}
log() { echo "drivers.sh: $*" >&2; }
skip() { log "$1 skipped: $2"; echo "$2" > "$cache/$1/SKIPPED"; }
root() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then apt-get update -qq >&2; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}
# The hash of a program's source: a changed program is built again.
same_source() { [ -f "$2" ] && [ "$(sha256sum < "$1")" = "$(cat "$2")" ]; }

# pymongo, pinned: the workload's counters are what this version sends.
rm -f "$cache/python/SKIPPED"
if [ ! -f "$cache/python/pymongo/__init__.py" ]; then
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --target "$cache/python" 'pymongo==4.20.1' >&2 ||
    skip python "pip install pymongo==4.20.1 failed"
fi

# The Node.js driver: 7.x needs node >= 20.19, 6.x runs on older ones.
rm -f "$cache/node/SKIPPED"
if ! command -v node >/dev/null && root; then apt_install nodejs npm || true; fi
if ! command -v npm >/dev/null; then
  skip node "no node/npm on PATH (apt-get install nodejs npm)"
elif [ ! -f "$cache/node/node_modules/mongodb/package.json" ]; then
  if node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&b>=19)?0:1)'; then v=7.9.0; else v=6.21.0; fi
  (cd "$cache/node" && npm install --silent --no-audit --no-fund --no-save "mongodb@$v" >&2) || skip node "npm install mongodb@$v failed"
fi

# Go: Debian's go and driver (1.8.4: OP_MSG and transactions, wire versions up to 6.0's 17).
rm -f "$cache/go/SKIPPED"
gopath=/usr/share/gocode
if { ! command -v go >/dev/null || [ ! -d "$gopath/src/go.mongodb.org/mongo-driver" ]; } && root; then
  apt_install golang-go golang-mongodb-mongo-driver-dev || true
fi
if ! command -v go >/dev/null || [ ! -d "$gopath/src/go.mongodb.org/mongo-driver" ]; then
  skip go "no go or Go driver (apt-get install golang-go golang-mongodb-mongo-driver-dev, as root)"
elif ! same_source "$src/workload.go" "$cache/go/source.sha256" || [ ! -x "$cache/go/workload-go" ]; then
  log "building the Go workload"
  if GO111MODULE=off GOPATH="$gopath" GOCACHE="$cache/go/cache" GOFLAGS= go build -o "$cache/go/workload-go" "$src/workload.go" >&2; then
    sha256sum < "$src/workload.go" > "$cache/go/source.sha256"
  else
    skip go "go build of tests/drivers/workload.go failed"
  fi
fi

# Java: Debian's driver 3.6.3 (OP_MSG yes; transactions no: the program says so).
rm -f "$cache/java/SKIPPED"
jars=(/usr/share/java/mongodb-driver-3.6.3.jar /usr/share/java/mongodb-driver-core-3.6.3.jar /usr/share/java/bson-3.6.3.jar)
if { ! command -v javac >/dev/null || [ ! -f "${jars[0]}" ]; } && root; then
  apt_install default-jdk-headless libmongodb-java || true
fi
if ! command -v javac >/dev/null || [ ! -f "${jars[0]}" ]; then
  skip java "no javac or Java driver 3.6.3 (apt-get install default-jdk-headless libmongodb-java, as root)"
elif ! same_source "$src/Workload.java" "$cache/java/source.sha256" || [ ! -f "$cache/java/classes/Workload.class" ]; then
  log "compiling the Java workload"
  cp="$(IFS=:; echo "${jars[*]}")"
  if javac -d "$cache/java/classes" -cp "$cp" "$src/Workload.java" >&2; then
    echo "$cache/java/classes:$cp" > "$cache/java/classpath"
    sha256sum < "$src/Workload.java" > "$cache/java/source.sha256"
  else
    skip java "javac of tests/drivers/Workload.java failed"
  fi
fi
echo "$cache"
