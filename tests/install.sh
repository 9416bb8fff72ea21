#!/usr/bin/env bash
# tests/install.sh — `make install` into a temporary DESTDIR, then the
# installed tools run with the source tree out of the way (a tmpfs mounted
# over it in a mount namespace of their own): mrcemu --version, sim with the
# installed default topology and by bare name, run with the daemons from
# libexec/mrcemu, mrcemu-gen-leafspine, mrcgen, the dissector installed per
# user by `mrcemu wireshark-plugin` and loaded by tshark without -X, the
# man pages and the bash completion; then `make uninstall` leaves no file.
# Needs root (mount namespace, network namespaces).
set -uo pipefail
. "$(dirname "$0")/lib/report.sh"
BUILD=${BUILD:-build}
need_root install

src=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
version=$(cat VERSION)

make -s install BUILD="$BUILD" DESTDIR="$root" PREFIX=/usr >"$tmp/install.out" 2>&1
check make-install test $? -eq 0 || sed 's/^/# /' "$tmp/install.out"
for f in usr/bin/mrcemu usr/libexec/mrcemu/nicd usr/libexec/mrcemu/switchd \
	usr/share/mrcemu/configs/default.ini usr/share/mrcemu/configs/workloads/default.csv \
	usr/share/mrcemu/mrc.lua usr/share/man/man1/mrcemu.1 usr/share/man/man5/mrcemu-topology.5 \
	usr/share/man/man8/nicd.8 usr/share/man/man8/switchd.8 \
	usr/share/bash-completion/completions/mrcemu usr/share/doc/mrcemu/protocol.md; do
	check "installed-$f" test -e "$root/$f"
done
check daemons-not-in-path test ! -e "$root/usr/bin/nicd" -a ! -e "$root/usr/bin/switchd"
check dissector-where-wireshark-loads test -n "$(find "$root" -path '*/wireshark/plugins/mrc.lua')"

# The checks below run with the source tree hidden; each prints ok/not ok.
cat >"$tmp/hidden.sh" <<HIDDEN
set -u
. "$tmp/report.sh"
bin=$root/usr/bin
cd "$tmp" && mkdir -p work home && cd work
check source-tree-hidden test -z "\$(ls -A "$src")"
check version test "\$("\$bin/mrcemu" --version)" = "mrcemu $version"
"\$bin/mrcemu" sim -o out -q
check sim-installed-default test \$? -eq 0 -a "\$(wc -l <out/messages.csv)" -eq 4
"\$bin/mrcemu" sim incast-8.ini -o incast -q
check sim-installed-by-name test \$? -eq 0 -a -s incast/messages.csv
"\$bin/mrcemu-gen-leafspine" 4 -o gen >/dev/null
check gen-leafspine test \$? -eq 0 -a -s gen/leaf-spine-4.ini
"\$bin/mrcemu" sim gen/leaf-spine-4.ini -o gen-out -q
check sim-generated test \$? -eq 0
"\$bin/mrcgen" -w msg.pcap --src 10.0.0.1 --dst 10.0.0.2 --message 16384 --msn 1 --dqpn 0x100 --conn >/dev/null
check mrcgen test \$? -eq 0 -a -s msg.pcap
HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config "\$bin/mrcemu" wireshark-plugin >/dev/null
check wireshark-plugin test -s "$tmp/home/.local/lib/wireshark/plugins/mrc.lua"
n=\$(HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config tshark -n -r msg.pcap -Y 'mrc.opcode >= 0xc6 && mrc.meth.msn == 1' 2>/dev/null | wc -l)
check dissector-loaded-without-x test "\$n" -eq 4
"\$bin/mrcemu" run --name inst\$\$ -o run-out -q
check run-installed-daemons test \$? -eq 0 -a -s run-out/lateness.csv
for m in man1/mrcemu.1 man5/mrcemu-topology.5 man8/nicd.8 man8/switchd.8; do
	w=\$(MANWIDTH=80 man --warnings -l "$root/usr/share/man/\$m" 2>&1 >/dev/null)
	check "man-\$m" test -z "\$w"
done
check bash-completion bash -c ". $root/usr/share/bash-completion/completions/mrcemu && complete -p mrcemu >/dev/null"
exit \$failed
HIDDEN
cp tests/lib/report.sh "$tmp/report.sh"
unshare -m --propagation private bash -c "mount -t tmpfs none '$src' && bash '$tmp/hidden.sh'" ||
	failed=1

make -s uninstall BUILD="$BUILD" DESTDIR="$root" PREFIX=/usr >/dev/null 2>&1
check make-uninstall-leaves-no-file test -z "$(find "$root" -type f -o -type l)"
exit $failed
