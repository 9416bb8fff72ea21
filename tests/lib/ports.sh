# tests/lib/ports.sh — sourced by tests/tap.sh and tests/dpdk.sh: two NICs
# on one switch whose links use port kind KIND at h0's end and at the
# switch's end towards h1 (docs/topology.md, Port kinds), and the check
# that a run through them equals the simulation.

# ports_topology FILE EMULATION KIND: the topology, its workload beside it.
ports_topology() {
	cat >"$1" <<INI
[emulation]
name  = $2
seed  = 1
scale = 20000
[nic h0]
ip = 10.0.0.1
[nic h1]
ip = 10.0.0.2
[switch s0]
[link h0 s0]
rate  = 400Gbps
delay = 1us
ports = $3 packet
[link h1 s0]
rate  = 400Gbps
delay = 1us
ports = packet $3
[workload]
file = $(basename "$1" .ini).csv
INI
	printf 'id,at,src,dst,bytes,after\n1,0ns,h0,h1,256KiB,\n2,0ns,h1,h0,256KiB,\n3,0ns,h0,h1,64KiB,1\n' \
		>"${1%.ini}.csv"
}

# ports_run_equals_sim FILE EMULATION KIND DIR: sim, then run, of FILE into
# DIR/sim and DIR/run: three messages verified, the same messages.csv, and
# nothing left behind.
ports_run_equals_sim() {
	local ini=$1 emu=$2 kind=$3 dir=$4 rc
	"$MRCEMU" sim "$ini" -o "$dir/sim" -q
	check "sim" test $? -eq 0
	"$MRCEMU" run "$ini" -o "$dir/run" >"$dir/run.out" 2>"$dir/run.err"
	rc=$?
	check "run through $kind ports exits 0" test $rc -eq 0 || sed 's/^/# /' "$dir/run.err" | tail -5
	check "run: 3 messages verified" \
		test "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "verified") v = i; next }
			v && $v == "true"' "$dir/run/messages.csv" 2>/dev/null | wc -l)" -eq 3
	check "run equals sim through $kind ports" cmp -s "$dir/run/messages.csv" "$dir/sim/messages.csv" ||
		diff "$dir/sim/messages.csv" "$dir/run/messages.csv" 2>&1 | sed 's/^/# /'
	check "nothing left" test -z "$(ip netns list | grep "^mrc-$emu-")"
}
