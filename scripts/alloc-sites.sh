#!/usr/bin/env bash
# Where the Java heap a run allocates goes, by allocation site (issue 56's "heap per message"):
# runs `./nicsim run WORKLOAD --iters N ARGS...` under Java Flight Recorder's allocation sampling and
# prints the bytes per message of each site in nicsim's code, largest first.
# Usage: scripts/alloc-sites.sh WORKLOAD ITERS [run options...]
#   e.g. scripts/alloc-sites.sh write_bw 2000 --size 65536
# Figures include the run's setup (QPs, MRs, warm-up of the JIT): use enough iterations that it is
# small beside them; `./nicsim bench --sections work` gives the exact marginal figure per message.
# Small fixed TLABs make the sampler see most refills (JFR samples at TLAB refills): the run is slower,
# its allocation the same.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
workload="$1"; iters="$2"; shift 2
out="$(mktemp -d "${TMPDIR:-/tmp}/alloc-sites.XXXXXX")"
trap 'rm -rf "$out"' EXIT
jh="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
# the JDK's profile settings, with the allocation sampler's throttle raised from 150 to 20,000 samples a second
throttle='s|<setting name="throttle"[^>]*>[^<]*</setting>|<setting name="throttle">20000/s</setting>|'
sed "/jdk.ObjectAllocationSample/,/<\/event>/ $throttle" "$jh/lib/jfr/profile.jfc" > "$out/alloc.jfc"
jfr="-XX:StartFlightRecording=filename=$out/run.jfr,settings=$out/alloc.jfc"
JAVA_OPTS="-XX:-ResizeTLAB -XX:TLABSize=2k $jfr ${JAVA_OPTS:-}" \
  "$root/nicsim" run "$workload" --iters "$iters" "$@" | tail -1
java "$root/scripts/alloc-sites/AllocSites.java" "$out/run.jfr" "$iters" "${ROWS:-30}"
