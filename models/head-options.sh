# The learned default's head options, shared by models/setup.sh and models/leave-one-source-out.sh
# (sourced; defines the bash array train_args).
train_args=(--split train --test-percent 20 --epochs 50 --hidden 512 --lr 0.003 --weight-decay 0.0001 --seed 7
            --ensemble 3 --label-smoothing 0.1 --augment-crops --lexical-mix 0.35 --lexical-epochs 20
            --lexical-lr 0.01)
