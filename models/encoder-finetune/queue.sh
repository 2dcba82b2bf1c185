#!/bin/sh
# The runs of the table in README.md, one at a time (logs in the current directory).
set -e
cd "$(dirname "$0")"
nice -n 19 /usr/bin/python3 baseline.py > baseline.log 2>&1
nice -n 19 /usr/bin/python3 finetune.py --mode all --epochs 1 --lr-enc 5e-5 --lr-head 5e-4 --tag all_e1 > all_e1.log 2>&1
nice -n 19 /usr/bin/python3 finetune.py --mode all --epochs 3 --lr-enc 2e-4 --lr-head 1e-3 --eval-every 1126 --tag all_e3_lr2e-4 > all_e3_lr2e-4.log 2>&1
nice -n 19 /usr/bin/python3 finetune.py --mode all --epochs 3 --lr-enc 2e-4 --lr-head 1e-3 --exclude stackexchange --tag loso_se_all_e3 > loso_se_all_e3.log 2>&1
nice -n 19 /usr/bin/python3 finetune.py --mode all --rows se_all --epochs 2 --lr-enc 2e-4 --lr-head 1e-3 --tag se_all_e2 > se_all_e2.log 2>&1
nice -n 19 /usr/bin/python3 finetune.py --mode all --rows mix+se_all --epochs 1 --lr-enc 2e-4 --lr-head 1e-3 --tag mix_se_all_e1 > mix_se_all_e1.log 2>&1
