# Sourced by .ci/run (and tests/system/test_ci_tools.py): the tools the tests need, and how a run ends.
#   need TOOL PACKAGE...   TOOL (a command; "a|b" for alternatives) on PATH, else the Debian
#                          PACKAGEs installed (root and apt-get; apt-get update runs once)
#   lacking TEXT           a tool that is still missing: under CI (the CI variable set) a
#                          failure, elsewhere the tests that need it skip, saying why
#   fail_if_lacking_under_ci   ends the run (exit 1) before any test when CI lacks a tool
#   run_tests CMD...       runs the tests; pytest's exit 5 (no tests collected) is a failure
# Later tools (Slurm, node_exporter, ...) are one more `need` line in .ci/run.

say() { echo "ci: $*" >&2; }
under_ci() { [[ -n ${CI:-} ]]; }
lacks=()
lacking() {
  if under_ci; then say "FAIL: $*"; else say "$*: the tests that need it will skip, saying why"; fi
  lacks+=("$*")
}
have() {
  local alt alts
  IFS='|' read -ra alts <<<"$1"
  for alt in "${alts[@]}"; do command -v "$alt" >/dev/null && return 0; done
  return 1
}
apt_updated=""
apt_install() {
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    say "installing $* needs root and apt-get (apt-get install $*)"
    return 1
  fi
  if [[ -z $apt_updated ]]; then apt-get update -qq || return 1; apt_updated=1; fi
  say "installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
need() {
  local tool=$1
  shift
  have "$tool" && return 0
  if (($#)) && apt_install "$@" && have "$tool"; then return 0; fi
  lacking "${tool%%|*} is missing and could not be installed${*:+ (Debian: $*)}"
}
fail_if_lacking_under_ci() {
  if under_ci && ((${#lacks[@]})); then
    say "FAIL: under CI ${#lacks[@]} tool(s) the tests need could not be installed; failing rather than skipping their tests"
    exit 1
  fi
}
run_tests() {
  local status=0
  "$@" || status=$?
  if ((status == 5)); then
    say "FAIL: pytest collected no tests (exit 5): nothing was tested"
  elif ((status != 0)); then
    say "FAIL: the tests exited $status"
  fi
  return "$status"
}
