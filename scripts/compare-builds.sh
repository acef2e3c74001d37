# Sourced by the scripts that compare two builds (connection-memory, send-cpu,
# one-to-one-cpu). `compare_builds RUNS LABEL MEASURE [ARGUMENTS...]` runs
# `MEASURE <build> ARGUMENTS...` for $BASE_BIN and $herald alternately, RUNS times each,
# alternating which goes first so that neither always runs on a warmer machine. MEASURE
# prints the figure first on its line (more may follow). Each run's ratio (this build /
# base) is printed, then their median.
compare_builds() {
  local runs=$1 label=$2 base new ratio run ratios=()
  shift 2
  for run in $(seq "$runs"); do
    if [ $((run % 2)) = 1 ]; then
      base=$("$@" "$BASE_BIN"); new=$("$@" "$herald")
    else
      new=$("$@" "$herald"); base=$("$@" "$BASE_BIN")
    fi
    ratio=$(echo "${new%% *} / ${base%% *}" | bc -l)
    ratios+=("$ratio")
    printf '%s run %d: base %s, this build %s, ratio %.3f\n' "$label" "$run" "$base" "$new" "$ratio"
  done
  printf '%s: median ratio %.3f\n' "$label" \
    "$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
}
