#!/usr/bin/env bash
# Process-level tests of the radiusward command line: exit statuses (0 ok,
# 1 runtime failure, 2 config error), `check` output with file:line:col, a
# gateway that starts, logs its listeners, reloads on SIGHUP and `ctl reload`
# and stops cleanly on SIGTERM, and a second gateway refused on a port
# already in use.
#   src/app/cli_test.sh RADIUSWARD_BINARY
set -uo pipefail

binary=$1
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# expect_status STATUS COMMAND...: runs COMMAND, output to $work/out and $work/err.
expect_status() {
  local want=$1
  shift
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  [ "$got" -eq "$want" ] || fail "$* exited $got, expected $want; stderr: $(cat "$work/err")"
}

expect_in() {
  grep -qF -- "$2" "$1" || fail "expected '$2' in $1: $(cat "$1")"
}

# Waits (bounded) until FILE contains TEXT.
wait_for() {
  for _ in $(seq 1 200); do
    grep -qF -- "$2" "$1" && return 0
    sleep 0.05
  done
  fail "timed out waiting for '$2' in $1: $(cat "$1")"
  return 1
}

printf 'alice Cleartext-Password := "wonderland"\n' >"$work/users"
printf 'client localhost {\n  ipaddr = 127.0.0.1\n  secret = testing123\n}\n' >"$work/clients.conf"

# version
expect_status 0 "$binary" version
expect_in "$work/out" "radiusward "

# usage errors
expect_status 2 "$binary"
expect_status 2 "$binary" gateway --no-such-flag
expect_status 2 "$binary" gateway --workers many

# check: valid
printf 'listen: [127.0.0.1]\nusers_file: users\nclients_file: clients.conf\ndictionary_dir:\n' >"$work/good.yaml"
expect_status 0 "$binary" check --config "$work/good.yaml"
expect_in "$work/out" "ok"

# check: every error, with positions, exit 2
printf 'auth_port: 70000\ncolour: blue\nusers_file: missing-users\nclients_file: clients.conf\n' >"$work/bad.yaml"
expect_status 2 "$binary" check --config "$work/bad.yaml"
expect_in "$work/err" "$work/bad.yaml:1:12: expected an integer between 0 and 65535, got '70000'"
expect_in "$work/err" "$work/bad.yaml:2:1: unknown key 'colour'"

# check: files named by the config must be readable
printf 'users_file: missing-users\nclients_file: clients.conf\ndictionary_dir:\n' >"$work/missing.yaml"
expect_status 2 "$binary" check --config "$work/missing.yaml"
expect_in "$work/err" "$work/missing.yaml:1:1: cannot read users file '$work/missing-users'"

# gateway: config errors start nothing
expect_status 2 "$binary" gateway --config "$work/bad.yaml"
expect_status 2 "$binary" gateway --users "$work/users"
expect_in "$work/err" "--clients: required without --config"

# gateway: starts on free ports, stops cleanly on SIGTERM with counters
"$binary" gateway --config "$work/good.yaml" --auth-port 0 --acct-port 0 --workers 2 \
  >"$work/gw.out" 2>"$work/gw.err" &
gateway=$!
pids+=("$gateway")
if wait_for "$work/gw.err" "(accounting)"; then
  expect_in "$work/gw.err" "gateway started with 2 workers"
  # SIGHUP reloads the config and the files it names (docs/operations.md "Reload").
  kill -HUP "$gateway"
  wait_for "$work/gw.err" "reload (SIGHUP): accepted; configuration generation 1 in effect"
  kill -TERM "$gateway"
  wait "$gateway"
  status=$?
  [ "$status" -eq 0 ] || fail "gateway exited $status after SIGTERM, expected 0"
  expect_in "$work/gw.err" "SIGTERM received: stopping"
  expect_in "$work/gw.err" "all workers: received 0 sent 0"
fi

# gateway with accounting: the admin API shows the submission state; SIGTERM
# stops it cleanly and removes the socket. Port 9 has no member: nothing is
# answered, which is the point (docs/design.md invariant 1).
"$binary" gateway --config "$work/good.yaml" --auth-port 0 --acct-port 0 --workers 1 \
  --member 127.0.0.1:9 --insecure-plaintext-cluster --admin-socket "$work/gw.sock" >"$work/acct.out" 2>"$work/acct.err" &
accounting=$!
pids+=("$accounting")
if wait_for "$work/acct.err" "(accounting)"; then
  expect_in "$work/acct.err" "accounting: submitting to 1 member(s), first 127.0.0.1:9"
  # Not connected to a leader: `ctl status` says so and exits 3, with the
  # table or with the JSON body (docs/admin_api.md "Health").
  expect_status 3 "$binary" ctl --socket "$work/gw.sock" status --grace 0
  expect_in "$work/out" "UNHEALTHY: submission"
  expect_in "$work/out" "(127.0.0.1:9)"
  expect_status 3 "$binary" ctl --socket "$work/gw.sock" status --json --grace 0
  expect_in "$work/out" '"role":"gateway"'
  expect_in "$work/out" '"submission":{"state":'
  expect_in "$work/out" '"address":"127.0.0.1:9"'
  expect_status 0 "$binary" ctl --socket "$work/gw.sock" metrics
  expect_in "$work/out" "radiusward_submission_pending_records 0"
  expect_in "$work/out" 'radiusward_submission_events_total{reason="connects"}'
  expect_in "$work/out" 'radiusward_gateway_drops_total{reason="accounting_refused"} 0'
  expect_in "$work/out" 'radiusward_gateway_accounting_total{event="submitted"} 0'
  expect_status 0 "$binary" ctl --socket "$work/gw.sock" version
  expect_in "$work/out" '"role":"gateway"'
  # ctl reload: the same reload as SIGHUP, its outcome as exit status.
  expect_status 0 "$binary" ctl --socket "$work/gw.sock" reload
  expect_in "$work/out" "reloaded: configuration generation 1 in effect"
  kill -TERM "$accounting"
  wait "$accounting" || fail "accounting gateway did not stop cleanly on SIGTERM"
  [ -e "$work/gw.sock" ] && fail "admin socket left behind after SIGTERM"
fi

# check: a session-key recipe naming an unknown attribute, at its position
printf 'users_file: users\nclients_file: clients.conf\ndictionary_dir:\naccounting:\n  members: [127.0.0.1:7301]\n  key: User-Name,Nope\n  insecure_plaintext_cluster: true\n' >"$work/key.yaml"
expect_status 2 "$binary" check --config "$work/key.yaml"
expect_in "$work/err" "$work/key.yaml:6:8: accounting.key: unknown attribute 'Nope'"

# check: plaintext submissions only towards loopback (docs/security.md); the
# address is a documentation one, never contacted
printf 'users_file: users\nclients_file: clients.conf\ndictionary_dir:\naccounting:\n  members: [192.0.2.1:7301]\n  insecure_plaintext_cluster: true\n' >"$work/plain.yaml"
expect_status 2 "$binary" check --config "$work/plain.yaml"
expect_in "$work/err" "$work/plain.yaml:5:13: insecure_plaintext_cluster is set but 192.0.2.1:7301 is not a loopback address"
printf 'id: 1\ndata_dir: m1\nraft_address: 192.0.2.1:7201\nsubmission_listen: 127.0.0.1:7301\nmembers:\n  - {id: 1, raft: 192.0.2.1:7201, submission: 127.0.0.1:7301}\ninsecure_plaintext_cluster: true\n' >"$work/member-plain.yaml"
expect_status 2 "$binary" check --member-config "$work/member-plain.yaml"
expect_in "$work/err" "$work/member-plain.yaml:6:19: insecure_plaintext_cluster is set but 192.0.2.1:7201 is not a loopback address"
sed -i 's/192.0.2.1/127.0.0.1/g' "$work/member-plain.yaml"
expect_status 0 "$binary" check --member-config "$work/member-plain.yaml"

# gateway: a port in use is a runtime failure (1) naming the call and address
port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$binary" gateway --config "$work/good.yaml" --auth-port "$port" --acct-port 0 >"$work/first.out" 2>"$work/first.err" &
first=$!
pids+=("$first")
if wait_for "$work/first.err" "(accounting)"; then
  expect_status 1 "$binary" gateway --config "$work/good.yaml" --auth-port "$port" --acct-port 0
  expect_in "$work/err" "bind 127.0.0.1:$port: Address already in use"
fi
kill -INT "$first"
wait "$first" || fail "first gateway did not stop cleanly on SIGINT"

if [ "$failures" -ne 0 ]; then
  echo "cli_test: $failures failures" >&2
  exit 1
fi
echo "cli_test: all passed"
