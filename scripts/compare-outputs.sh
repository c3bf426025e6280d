#!/usr/bin/env bash
# Solves every stdlib network on every stdlib hardware template, for inference
# and for training, with two dflc binaries, and compares what they write:
# every file of OUT byte for byte (schedule.dfl, report.json, report.html and
# the plots), the exit status, and stdout with its timing figures masked. A refactoring must leave all equal.
#
#   scripts/compare-outputs.sh OLD_DFLC NEW_DFLC [WORKDIR]
#
# Build OLD_DFLC from the commit before the change (e.g. a `git worktree` of
# it). Old outputs already in WORKDIR are reused. Exits 0 if every case is identical, 1 otherwise (the diffs printed).
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_DFLC NEW_DFLC [WORKDIR]" >&2
  exit 2
fi
old=$(realpath "$1"); new=$(realpath "$2")
work=${3:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

run() {   # run BIN DIR NET HW MODE
  local bin=$1 dir=$2 net=$3 hw=$4 mode=$5 flags=()
  [ "$mode" = train ] && flags=(--train)
  mkdir -p "$dir"
  "$bin" "stdlib/nets/$net.dfl" "stdlib/hw/$hw.dfl" -o "$dir" "${flags[@]}" >"$dir/stdout" 2>"$dir/stderr"
  echo $? >"$dir/status"
  # Solve times differ run to run and the output directory differs by side;
  # everything else must not.
  sed -i -E -e "s|$dir|OUT|g" -e 's/[0-9]+(\.[0-9]+)?(e-?[0-9]+)? s\b/T s/g' "$dir/stdout" "$dir/stderr"
}

cases=()
for net in stdlib/nets/*.dfl; do
  for hw in stdlib/hw/*.dfl; do
    for mode in infer train; do
      cases+=("$(basename "$net" .dfl) $(basename "$hw" .dfl) $mode")
    done
  done
done

differ=0
for c in "${cases[@]}"; do
  read -r net hw mode <<<"$c"
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    # An old side already in WORKDIR is reused: compare many new builds to one baseline.
    [ $side = old ] && [ -f "$work/old/$net-$hw-$mode/status" ] && continue
    run "$bin" "$work/$side/$net-$hw-$mode" "$net" "$hw" "$mode"
  done
  if diff -r "$work/old/$net-$hw-$mode" "$work/new/$net-$hw-$mode" >/dev/null; then
    echo "same     $net on $hw ($mode), exit $(cat "$work/new/$net-$hw-$mode/status")"
  else
    echo "DIFFERS  $net on $hw ($mode)"
    diff -r "$work/old/$net-$hw-$mode" "$work/new/$net-$hw-$mode" | head -20
    differ=1
  fi
done
echo "${#cases[@]} cases compared in $work"
exit $differ
