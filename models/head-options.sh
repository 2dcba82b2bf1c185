# The learned default's training options, shared by models/setup.sh and
# models/leave-one-source-out.sh (sourced): mix_args for models/training-mix.py (the training
# rows) and train_args for `mcpclass train` (the head).
mix_args=(--cap 1000 --augment 0.3)
train_args=(--split train --test-percent 20 --epochs 50 --hidden 512 --lr 0.003 --weight-decay 0.0001 --seed 7
            --ensemble 3 --label-smoothing 0.1 --augment-crops --lexical-mix 0.35 --lexical-epochs 20
            --lexical-lr 0.01 --scope-catchall other --scope-label-weight 0.05)
