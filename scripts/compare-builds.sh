# Sourced by the scripts that compare two builds (connection-memory, send-cpu, webpush-cpu, upstream-cpu,
# one-to-one-cpu). `compare_builds RUNS LABEL MEASURE [ARGUMENTS...]` runs
# `MEASURE <build> ARGUMENTS...` for $BASE_BIN and $herald alternately, RUNS times each,
# alternating which goes first so that neither always runs on a warmer machine. MEASURE
# prints its figures on one line, separated by spaces. Each run's ratios (this build /
# base, figure by figure) are printed, then the median of each figure's ratios.
compare_builds() {
  local runs=$1 label=$2 base new ratio run field ratios=() medians=()
  shift 2
  for run in $(seq "$runs"); do
    if [ $((run % 2)) = 1 ]; then
      base=$("$@" "$BASE_BIN"); new=$("$@" "$herald")
    else
      new=$("$@" "$herald"); base=$("$@" "$BASE_BIN")
    fi
    ratio=$(paste -d ' ' <(tr ' ' '\n' <<<"$new") <(tr ' ' '\n' <<<"$base") |
      awk '{ printf "%s%.3f", (NR > 1 ? " " : ""), $1 / $2 }')
    ratios+=("$ratio")
    printf '%s run %d: base %s, this build %s, ratio %s\n' "$label" "$run" "$base" "$new" "$ratio"
  done
  for field in $(seq "$(wc -w <<<"${ratios[0]}")"); do
    medians+=("$(printf '%s\n' "${ratios[@]}" | awk -v f="$field" '{ print $f }' | sort -g |
      awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')")
  done
  printf '%s: median ratio %s\n' "$label" "${medians[*]}"
}
