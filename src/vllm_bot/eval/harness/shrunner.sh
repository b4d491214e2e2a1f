# Runs an eval task's shell tests, started by check.py as `bash --norc --noprofile` with no BASH_ENV,
# ENV or exported functions. Reads the nonce (the first line of stdin) and the tests' sources (the
# rest) before anything of the workspace runs, defines the test_* functions they declare, runs each in
# a subshell (`set -e`, the nonce unset, stdin empty), then writes one end-of-run line to stdout:
# `@@vllm-bot-eval NONCE ran=N passed=M`. The code under test runs as child processes of the tests
# (`bash script.sh`): it cannot reach this shell's variables.
set -u
IFS= read -r nonce
sources=$(cat)
exec 0</dev/null

# Helpers for the tests: fail with a message, compare two strings.
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}
assert_eq() {
  if [ "$1" != "$2" ]; then
    printf 'expected:\n%s\ngot:\n%s\n' "$1" "$2" >&2
    exit 1
  fi
}

eval "$sources"
ran=0
passed=0
for name in $(compgen -A function test_); do
  ran=$((ran + 1))
  (
    unset nonce sources
    set -e
    "$name"
  )
  status=$?
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
    echo "ok $ran - $name"
  else
    echo "not ok $ran - $name (exit $status)"
  fi
done
printf '@@vllm-bot-eval %s ran=%d passed=%d\n' "$nonce" "$ran" "$passed"
