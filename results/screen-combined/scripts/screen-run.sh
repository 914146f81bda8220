#!/bin/bash
# screen one candidate against ispimc:20:infer (seeds 90000-90299; a third argument: another first seed)
cd /work/main
NAME=$1; CAND=$2; SEED=${3:-90000}
[[ $NAME == confirm-* ]] && SEED=91000  # the confirmation of the chosen candidate: other deals
[[ $NAME == confirm2-* ]] && SEED=91300  # and 300 more
export OMP_NUM_THREADS=1
/usr/bin/time -v nice -n 10 .venv/bin/pasur arena --agents "$CAND,ispimc:20:infer" --pairs "$CAND/ispimc:20:infer" --deals 300 --seed $SEED --engine inline --threads 1 --quiet --out runs/screen-$NAME > runs/screen-$NAME.log 2>&1
