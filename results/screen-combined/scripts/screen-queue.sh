#!/bin/bash
# run the queued screens one at a time (runs/screen-queue.txt: NAME CANDIDATE per line)
cd /work/main
while true; do
  line=$(head -1 runs/screen-queue.txt 2>/dev/null)
  [ -z "$line" ] && break
  sed -i 1d runs/screen-queue.txt
  set -- $line
  while [ $(free -g | awk '/Mem:/{print $7}') -lt 3 ]; do sleep 20; done
  echo "$(date -u +%T) start $1 $2" >> runs/screen-queue.log
  runs/screen-run.sh $1 $2 $3
  echo "$(date -u +%T) end $1 rc=$?" >> runs/screen-queue.log
done
