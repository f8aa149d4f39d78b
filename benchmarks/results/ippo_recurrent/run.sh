#!/bin/bash
# Feed-forward against recurrent IPPO on Mini-Hanabi, equal moves, seed 0, one thread, run one after the other.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=/work/frozenR
E="/work/main/.venv/bin/python -c import sys;from\ eqc.cli\ import\ main;sys.argv[0]='eqc';sys.exit(main())"
run() { /work/main/.venv/bin/python -c "import sys; from eqc.cli import main; sys.argv[0]='eqc'; sys.exit(main())" "$@"; }
uptime > /work/bench/ippo_rnn/uptime_before.txt
run hanabi train --config ippo_mini --seed 0 --out /work/bench/ippo_rnn/ff --threads 1 --no-progress --set run.total_moves=3000000 --set run.eval_every_moves=500000 > /work/bench/ippo_rnn/ff.log 2>&1
uptime > /work/bench/ippo_rnn/uptime_mid.txt
run hanabi train --config ippo_mini --seed 0 --out /work/bench/ippo_rnn/rnn --threads 1 --no-progress --set run.total_moves=3000000 --set run.eval_every_moves=500000 --set network.lstm_layers=1 > /work/bench/ippo_rnn/rnn.log 2>&1
uptime > /work/bench/ippo_rnn/uptime_after.txt
