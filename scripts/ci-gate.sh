#!/usr/bin/env bash
# The CI gate behind action.yml (GitHub Actions) and templates/gitlab-ci.yml (GitLab CI): runs
# `shardkey check` once and hands its report to the CI. The job log gets the table and, after
# it, one line per violation (GitHub: `::error` annotations; GitLab: `file:line: error: ...`).
# On GitHub: SARIF for code scanning, the step outputs and the job summary. On GitLab: the code
# quality report. tests/check.rs runs it against the real mongod.
#
#   scripts/ci-gate.sh install   install shardkey: the released static binary of this checkout's
#                                version when SHARDKEY_ACTION_REF is a release tag (v1, v0.2.0),
#                                checked against the release's SHA256SUMS; else built from this
#                                checkout with cargo (a branch or a commit: nothing released to match)
#   scripts/ci-gate.sh check     run the gate
#
# Inputs, from the environment (action.yml maps its inputs onto them):
#   SHARDKEY                 the binary (default: shardkey on PATH)
#   INPUT_POLICY             the policy file (default: shardkey.toml found from the working directory up)
#   INPUT_URI                the deployment; handed over as MONGODB_URI, never on a command line
#   INPUT_PASSWORD           its password; written to a private --config file, never on a command line
#   INPUT_QUERIES            query logs or `profile`, one per line
#   INPUT_BASELINE           a previous `check --format json`: fail only on what got worse
#   INPUT_CHANGED_FILES      the files of the change, one per line: a violation is annotated on the
#                            one that names its culprit. Default: `git diff --name-only` against the
#                            pull request's base (GITHUB_BASE_REF, CI_MERGE_REQUEST_DIFF_BASE_SHA)
#                            when the checkout has it (fetch-depth: 0 / GIT_DEPTH: 0), else none
#   INPUT_ARGS               more arguments for `shardkey check`, split at spaces
#   INPUT_REPORT             where the report goes (default: $RUNNER_TEMP/shardkey.sarif on GitHub,
#                            gl-code-quality-report.json on GitLab)
#   INPUT_FAIL_ON_VIOLATION  `false`: exit 0 when the policy is violated (errors still fail)
# Outputs ($GITHUB_OUTPUT when set): exit-code, passed, report.
# Exit: shardkey's (0 pass, 1 violated, 2 usage/configuration/connection error, 3 internal).
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"

# The release's static binary for this machine (.github/workflows/release.yml makes them:
# shardkey-VERSION-ARCH-unknown-linux-musl.tar.gz and SHA256SUMS). Returns 1 when the release has
# no such asset (then the caller compiles); exits 2 when an asset does not match its checksum.
install_released() {
    local version arch base tmp name
    version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
    case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) return 1 ;;
    esac
    [ "$(uname -s)" = Linux ] || return 1
    # The releases' host: SHARDKEY_RELEASE_URL (a mirror; the tests use file://), else the GitHub
    # repository the action came from (SHARDKEY_RELEASE_REPO), or GitLab's SHARDKEY_REPO when it is
    # a GitHub address.
    local repo="${SHARDKEY_RELEASE_REPO:-}"
    if [ -z "$repo" ] && [[ "${SHARDKEY_REPO:-}" =~ ^https://github\.com/([^/]+/[^/]+)$ ]]; then
        repo="${BASH_REMATCH[1]%.git}"
    fi
    if [ -z "${SHARDKEY_RELEASE_URL:-}" ] && [ -z "$repo" ]; then
        return 1
    fi
    base="${SHARDKEY_RELEASE_URL:-https://github.com/$repo/releases/download}/v$version"
    name="shardkey-$version-$arch-unknown-linux-musl.tar.gz"
    tmp="$(mktemp -d)"
    if ! curl -fsSL --retry 3 -o "$tmp/SHA256SUMS" "$base/SHA256SUMS" || ! curl -fsSL --retry 3 -o "$tmp/$name" "$base/$name"; then
        rm -rf "$tmp"
        echo "shardkey: no release asset $name at $base; building from source" >&2
        return 1
    fi
    # No line for the asset gives sha256sum nothing to check: it fails, as a mismatch does.
    if ! (cd "$tmp" && grep -F " $name" SHA256SUMS | sha256sum --check --status -); then
        rm -rf "$tmp"
        echo "shardkey: $name does not match the release's SHA256SUMS; not installed" >&2
        exit 2
    fi
    mkdir -p "$dest/bin"
    tar -xzf "$tmp/$name" -C "$tmp"
    install -m 0755 "$tmp/shardkey-$version-$arch-unknown-linux-musl/shardkey" "$dest/bin/shardkey"
    rm -rf "$tmp"
    echo "shardkey: installed the released $version binary ($arch) in $dest/bin" >&2
}

case "${1:-check}" in
install)
    dest="${SHARDKEY_INSTALL_ROOT:-$HOME/.cargo}"
    # A release tag (v1, v1.2, v0.2.0) was built by the release workflow; a branch or a commit
    # may hold code no release has, so it is compiled.
    if [[ "${SHARDKEY_ACTION_REF:-}" =~ ^v[0-9]+(\.[0-9]+){0,2}$ ]] && install_released; then
        :
    else
        if ! command -v cargo >/dev/null; then
            echo "shardkey: building from source needs cargo (a Rust toolchain) on PATH" >&2
            exit 2
        fi
        cargo install --locked --quiet --path "$root" --root "$dest"
    fi
    if [ -n "${GITHUB_PATH:-}" ]; then
        echo "$dest/bin" >>"$GITHUB_PATH"
    fi
    exit 0
    ;;
check) ;;
*)
    echo "usage: $0 install|check" >&2
    exit 2
    ;;
esac

bin="${SHARDKEY:-shardkey}"
tmp="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
args=(check)
if [ -n "${INPUT_POLICY:-}" ]; then
    args+=(--policy "$INPUT_POLICY")
fi
while IFS= read -r q; do
    if [ -n "$q" ]; then
        args+=(--queries "$q")
    fi
done <<<"${INPUT_QUERIES:-}"
if [ -n "${INPUT_BASELINE:-}" ]; then
    args+=(--baseline "$INPUT_BASELINE")
fi
changed="${INPUT_CHANGED_FILES:-}"
if [ -z "$changed" ]; then
    base=""
    if [ -n "${GITHUB_BASE_REF:-}" ]; then
        base="origin/$GITHUB_BASE_REF"
    elif [ -n "${CI_MERGE_REQUEST_DIFF_BASE_SHA:-}" ]; then
        base="$CI_MERGE_REQUEST_DIFF_BASE_SHA"
    fi
    # A shallow checkout lacks the base: annotations then point at the policy.
    if [ -n "$base" ] && ! changed="$(git diff --name-only "$base...HEAD" 2>/dev/null)"; then
        echo "shardkey gate: no diff against $base (shallow checkout?): annotations point at the policy" >&2
        changed=""
    fi
fi
files=()
while IFS= read -r f; do
    if [ -n "$f" ]; then
        files+=("$f")
    fi
done <<<"$changed"
if [ "${#files[@]}" -gt 0 ]; then
    args+=(--changed-files "${files[@]}")
fi
if [ -n "${INPUT_URI:-}" ]; then
    export MONGODB_URI="$INPUT_URI"
fi
if [ -n "${INPUT_PASSWORD:-}" ]; then
    case "$INPUT_PASSWORD" in
    *$'\n'*)
        echo "shardkey gate: the password holds a line break, which a YAML --config file cannot carry" >&2
        exit 2
        ;;
    esac
    config="$(mktemp "$tmp/shardkey-config.XXXXXX")"
    chmod 600 "$config"
    trap 'rm -f "$config"' EXIT
    # printf is a shell builtin: the password reaches no process's command line. YAML single
    # quotes take any character but the line break; a quote is doubled.
    printf "password: '%s'\n" "${INPUT_PASSWORD//\'/\'\'}" >"$config"
    args+=(--config "$config")
fi
if [ -n "${INPUT_ARGS:-}" ]; then
    read -r -a extra <<<"$INPUT_ARGS"
    args+=("${extra[@]}")
fi

if [ -n "${GITLAB_CI:-}" ] && [ -z "${GITHUB_ACTIONS:-}" ]; then
    format=gitlab
    report="${INPUT_REPORT:-gl-code-quality-report.json}"
else
    format=sarif
    report="${INPUT_REPORT:-$tmp/shardkey.sarif}"
fi

# The report to its file; the table and the annotations to the job log.
"$bin" "${args[@]}" --format "$format" --output-file "$report"
code=$?

case "$code" in
0) passed=true ;;
1) passed=false ;;
*)
    passed=false
    rm -f "$report"
    report=""
    ;;
esac
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
        echo "exit-code=$code"
        echo "passed=$passed"
        echo "report=$report"
    } >>"$GITHUB_OUTPUT"
fi
case "$code" in
0) echo "shardkey gate: the policy holds; report: $report" >&2 ;;
1) echo "shardkey gate: the policy is violated; report: $report" >&2 ;;
*) echo "shardkey gate: shardkey check failed (exit $code): see its message above" >&2 ;;
esac

if [ "$code" = 1 ] && [ "${INPUT_FAIL_ON_VIOLATION:-true}" = false ]; then
    exit 0
fi
exit "$code"
