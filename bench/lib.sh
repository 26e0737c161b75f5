# Shared helpers for the bench/ scripts (sourced, not run).
# SMTLAB: the smtlab binary (default: build/bin/smtlab of this checkout; ./smtlab builds it).
set -euo pipefail
BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SMTLAB=${SMTLAB:-$BENCH_ROOT/build/bin/smtlab}
need_smtlab() { [[ -x $SMTLAB ]] || { echo "bench: $SMTLAB not found; run ./smtlab (it builds) or set SMTLAB=" >&2; exit 1; }; }

die() { echo "bench: $*" >&2; exit 1; }
now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# stats V...: "median M  min A  max B  (n=N)"; values may be non-numeric ("-"), those are skipped.
stats() {
  printf '%s\n' "$@" | grep -E '^-?[0-9]+(\.[0-9]+)?$' | sort -g | awk '
    {v[NR]=$1}
    END{ if(NR==0){print "no values"; exit}
         m = NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2
         printf "median %.3f  min %.3f  max %.3f  (n=%d)\n", m, v[1], v[NR], NR }'
}
median() { printf '%s\n' "$@" | grep -E '^-?[0-9]+(\.[0-9]+)?$' | sort -g | awk '{v[NR]=$1} END{if(NR==0){print "nan"; exit} printf "%.3f\n", NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

machine_line() {
  local kvm=no
  if [[ -w /dev/kvm ]]; then
    kvm=yes
    # smtlab does not use a PVM /dev/kvm (Debian kernels do not boot there): guests get TCG.
    [[ -e /sys/module/kvm_pvm ]] && kvm="no (/dev/kvm is PVM: TCG)"
    [[ ${SMTLAB_ACCEL:-} == tcg ]] && kvm="no (SMTLAB_ACCEL=tcg)"
  fi
  echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), KVM usable: $kvm, load $(loadavg)"
}

# snapshot_smtlab DIR: copy smtlab and smtlab-guest (which must sit next to it) into DIR/bin and
# point SMTLAB there, so a rebuild of build/ during a measurement cannot swap binaries under it.
snapshot_smtlab() {
  local _
  for _ in $(seq 12); do [[ -x $SMTLAB ]] && break; sleep 10; done   # being relinked
  need_smtlab
  local d=$1/bin src
  src=$(dirname "$SMTLAB")
  mkdir -p "$d"
  for _ in 1 2 3 4 5; do
    cp "$SMTLAB" "$d/smtlab" && cp "$src/smtlab-guest" "$d/smtlab-guest" && "$d/smtlab" --help >/dev/null 2>&1 && break
    sleep 10   # being relinked: try again
  done
  SMTLAB=$d/smtlab
  "$SMTLAB" --help >/dev/null 2>&1 || die "cannot snapshot a working smtlab from $src"
}
