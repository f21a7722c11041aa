#!/usr/bin/env bash
# hack/stress.sh (make test-stress): the test suite, shuffled, STRESS_N times
# on a starved CPU, to find the tests that only hold on an idle machine.
# Each run has its own shuffle seed (printed, and named next to every
# failure) so a failure can be replayed with go test -shuffle=<seed>. The
# starvation is GOMAXPROCS=1 for the test binaries and the control planes
# (they inherit it), plus one busy-looping process per core for the run.
#
#   STRESS_N    runs (default 3)
#   STRESS_PKGS packages (default ./...)
#   STRESS_BUSY busy loops (default: the number of cores)
#   GO_TEST_FLAGS extra go test flags (default -timeout 30m)
set -euo pipefail

n=${STRESS_N:-3}
pkgs=${STRESS_PKGS:-./...}
busy=${STRESS_BUSY:-$(nproc)}
flags=${GO_TEST_FLAGS:--timeout 30m}
out=$(mktemp -d "${TMPDIR:-/tmp}/krtt-stress.XXXXXX")

busy_pids=()
stop_busy() {
	# Only the loops started here, by their ids.
	for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${busy_pids[@]}"; do wait "$p" 2>/dev/null || true; done
	busy_pids=()
}
trap stop_busy EXIT

# Built before the CPU is taken away: compiling under GOMAXPROCS=1 and the
# busy loops would only make the run longer, not the tests more stressed.
# shellcheck disable=SC2086
go test $flags -count=1 -exec /bin/true $pkgs >/dev/null

for i in $(seq 1 "$n"); do
	# A positive int64 from the clock, as go test -shuffle=on would pick.
	seed=$(date +%s%N)
	echo "stress run $i/$n: go test -shuffle=$seed $pkgs (GOMAXPROCS=1, $busy busy loops)"
	for _ in $(seq 1 "$busy"); do
		( while :; do :; done ) &
		busy_pids+=("$!")
	done
	# shellcheck disable=SC2086
	GOMAXPROCS=1 go run ./hack/testcp -- go test $flags -json -count=1 -shuffle="$seed" $pkgs \
		>"$out/run-$i.json" 2>"$out/run-$i.stderr" || true
	stop_busy
	# Failing tests, and packages that failed outside any test (TestMain:
	# a leak check, a control plane that did not start, a build error).
	jq -r --arg seed "$seed" '
		select(.Action == "fail")
		| "\(.Package)\t\(.Test // "(package: TestMain or build)")\t\($seed)"' \
		"$out/run-$i.json" >>"$out/failures.tsv" || true
done

echo
if [ ! -s "$out/failures.tsv" ]; then
	echo "test-stress: $n run(s), no failures (logs in $out)"
	exit 0
fi
echo "test-stress: failures (package, test, seed); go test -json output in $out:"
# A package fails whenever one of its tests does; list it alone only when
# no test of it failed in that run.
awk -F'\t' '$2 !~ /^\(package/ { t[$1 FS $3] = 1 } { rows[NR] = $0; pk[NR] = $1 FS $3; pt[NR] = $2 }
	END { for (i = 1; i <= NR; i++) if (pt[i] !~ /^\(package/ || !(pk[i] in t)) print rows[i] }' "$out/failures.tsv" |
	sort -u | column -t -s $'\t'
exit 1
