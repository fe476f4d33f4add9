#!/usr/bin/env bash
# Does a change move any figure? Runs two builds (bundles from scripts/bundle.sh) of ceiling
# side by side on one GPU, interleaved, and prints per validation variant and size the achieved
# bandwidth of each build (median over the rounds) and their ratio, then the `ceiling run` report
# sections of each build.
#   bash scripts/compare-builds.sh OLD_BUNDLE NEW_BUNDLE OUTDIR [DESCRIPTOR] [SIZES] [ROUNDS]
# DESCRIPTOR: a descriptor file both builds read (default: OLD_BUNDLE/hardware/<id of this GPU>.yaml);
# SIZES: validate --sizes, chosen away from the L2 split (default 4MiB,16MiB,128MiB,480MiB,1GiB);
# ROUNDS: old/new validate pairs (default 2). Leaves OUTDIR/summary.txt and OUTDIR/all.tgz.
set -uo pipefail
O=$(cd "${1:?usage: compare-builds.sh OLD NEW OUTDIR [DESCRIPTOR] [SIZES] [ROUNDS]}" && pwd)
N=$(cd "${2:?usage}" && pwd)
OUTDIR=${3:?usage}
mkdir -p "$OUTDIR"
W=$(mktemp -d)
S=$OUTDIR/summary.txt
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $name in *H200*) id=h200 ;; *H100*) id=h100-sxm ;; *) id=$(echo "$name" | tr 'A-Z ' 'a-z-') ;; esac
HW=${4:-$O/hardware/$id.yaml}
SIZES=${5:-4MiB,16MiB,128MiB,480MiB,1GiB}
ROUNDS=${6:-2}
echo "GPU: $name; descriptor $HW; sizes $SIZES; $ROUNDS rounds" | tee "$S"
for r in $(seq 1 "$ROUNDS"); do
  for b in old new; do
    B=$O; [[ $b == new ]] && B=$N
    t=$(date +%s%N)
    timeout 240 "$B/bin/ceiling" validate --hw "$HW" --sizes "$SIZES" --out "$W/$b-$r.json" > "$W/$b-$r.txt" 2> "$W/$b-$r.log"
    echo "validate $b round $r rc=$? $(( ($(date +%s%N) - t) / 1000000 )) ms" | tee -a "$S"
  done
done
for b in old new; do
  B=$O; [[ $b == new ]] && B=$N
  t=$(date +%s%N)
  (cd "$W" && timeout 300 "$B/bin/ceiling" run --out "$W/run-$b" > "$W/run-$b.log" 2>&1)
  echo "run $b rc=$? $(( ($(date +%s%N) - t) / 1000000 )) ms" | tee -a "$S"
done
python3 - "$W" "$ROUNDS" >> "$S" <<'EOF'
import json, re, statistics, sys, os
w, rounds = sys.argv[1], int(sys.argv[2])
def load(b):
    out = {}
    for r in range(1, rounds + 1):
        p = f"{w}/{b}-{r}.json"
        if not os.path.exists(p): continue
        for x in json.load(open(p))["results"]:
            key = (x["kernel"], x["precision"], x["variant"], tuple(sorted(x["size"].items())))
            out.setdefault(key, []).append(x["achieved_bytes_per_s"])
    return out
old, new = load("old"), load("new")
print("\nachieved bandwidth, median over rounds (TB/s)")
print(f"{'variant':<26} {'size':<22} {'old':>8} {'new':>8} {'new/old':>8}")
ratios = []
for key in sorted(set(old) & set(new), key=lambda k: (k[0], k[1], k[2], k[3])):
    a, b = statistics.median(old[key]), statistics.median(new[key])
    ratios.append(b / a)
    size = " ".join(f"{k}={int(v)}" for k, v in key[3])
    print(f"{key[0]+'.'+key[1]+'.'+key[2]:<26} {size:<22} {a/1e12:8.3f} {b/1e12:8.3f} {b/a:8.4f}")
only = set(old) ^ set(new)
if only: print("sizes in one build only:", sorted(only))
if ratios: print(f"new/old: min {min(ratios):.4f} median {statistics.median(ratios):.4f} max {max(ratios):.4f} ({len(ratios)} points)")
def sections(b):
    p = f"{w}/run-{b}/index.html"
    return re.findall(r'<h2 id="([^"]+)">([^<]+)</h2>', open(p).read()) if os.path.exists(p) else None
print("\nreport sections old:", sections("old"))
print("report sections new:", sections("new"))
for b in ("old", "new"):
    p = f"{w}/{b}-1.txt"
    if os.path.exists(p):
        t = open(p).read()
        print(f"\n{b} summary:\n" + t[t.find("Summary"):] if "Summary" in t else f"{b}: no summary")
EOF
tar -C "$W" -czf "$OUTDIR/all.tgz" . && echo "files: $OUTDIR/all.tgz" >> "$S"
cat "$S"
