#!/usr/bin/env bash
# The project's documents are its own: no file points outside the
# repository, every document that code, help text or the README cites
# exists, and every section a citation names is a heading of that document
# (docs/protocol.md §1..§12 and §12 rules 1..20; docs/architecture.md by
# section name).
set -uo pipefail
cd "$(dirname "$0")/.."
. tests/lib/report.sh

tracked() { git ls-files 2>/dev/null || find . -type f -not -path './build/*' -not -path './.git/*' | sed 's|^\./||'; }
files=$(tracked | grep -v '^tests/data/' | grep -v '^tests/docs.sh$')

# shellcheck disable=SC2086
outside=$(grep -nE '\.\./shared|/work/shared|seeds/000_' $files 2>/dev/null)
check "no file points outside the repository" test -z "$outside" || echo "$outside"

for f in LICENSE docs/README.md docs/protocol.md docs/vectors.md docs/topology.md \
	docs/records.md docs/control.md docs/architecture.md docs/cli.md; do
	check "$f exists" test -s "$f"
done

# shellcheck disable=SC2086
cited=$(grep -ohE 'docs/[a-z-]+\.md' $files | sort -u)
for d in $cited; do
	check "cited $d exists" test -f "$d"
done

# shellcheck disable=SC2086
bad=$(grep -ohE 'docs/protocol\.md,? ?(§|section )[0-9]+( rule [0-9]+)?' $files | sort -u |
	while read -r c; do
		n=$(echo "$c" | grep -oE '(§|section )[0-9]+' | grep -oE '[0-9]+')
		r=$(echo "$c" | grep -oE 'rule [0-9]+' | grep -oE '[0-9]+')
		grep -qE "^## $n\. " docs/protocol.md || echo "$c"
		if [ -n "$r" ]; then
			grep -qE "^$r\. " docs/protocol.md || echo "$c"
		fi
	done)
check "every docs/protocol.md section and rule cited exists" test -z "$bad" || echo "$bad"

# shellcheck disable=SC2086
bad=$(grep -ohE 'docs/architecture\.md[,:]? [A-Z][a-z]+( [a-z]+)*' $files | sort -u |
	sed -E 's/^docs\/architecture\.md[,:]? //' | while read -r s; do
		grep -qE "^#+ $s" docs/architecture.md || echo "$s"
	done)
check "every docs/architecture.md section cited exists" test -z "$bad" || echo "$bad"

exit $failed
