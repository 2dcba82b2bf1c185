"""Step 2: fine-tune the USE-lite TorchScript encoder jointly with the MLP head.
usage: finetune.py --mode all|layers [--exclude SOURCE] [--per-source N] [--epochs E] [--maxlen 64]"""
import os, sys, time, json, argparse, collections, numpy as np, torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *
torch.set_num_threads(1)
p = argparse.ArgumentParser()
p.add_argument('--mode', default='all', choices=['all', 'layers'])
p.add_argument('--exclude', default=None)
p.add_argument('--per-source', type=int, default=0, help='cap rows per source (0 = full mix)')
p.add_argument('--epochs', type=float, default=1.0)
p.add_argument('--maxlen', type=int, default=64)
p.add_argument('--bs', type=int, default=32)
p.add_argument('--lr-enc', type=float, default=5e-5)
p.add_argument('--lr-head', type=float, default=5e-4)
p.add_argument('--eval-every', type=int, default=0, help='eval test every N steps (0 = end only)')
p.add_argument('--tag', default='run')
p.add_argument('--rows', default='mix', choices=['mix', 'se_all', 'mix+se_all'], help='se_all: all 41,626 StackExchange train titles of router_queries.jsonl')
p.add_argument('--time-limit', type=float, default=1e9, help='stop training after this many seconds')
a = p.parse_args()
print(vars(a), flush=True)
t0 = time.time()
train, test = load()
cache = torch.load(f'{WORK}/cache.pt')
if a.rows != 'mix':
    se = [json.loads(l) for l in open(RQ)]
    se = [r for r in se if r['split'] == 'train' and r['source'] == 'stackexchange']
    if a.rows == 'se_all':
        train = se
    else:
        train = [r for r in train if r['source'] != 'stackexchange' or r.get('shape')] + se
    te0 = time.time()
    cache['Xtr'] = embed(torch.jit.load(ENC).eval(), tokenize([r['text'] for r in train]))
    print('frozen-embedded %d train rows in %.0fs' % (len(train), time.time() - te0), flush=True)
rng = np.random.default_rng(0)
keep = [i for i, r in enumerate(train) if r['source'] != a.exclude]
if a.per_source:
    by = collections.defaultdict(list)
    for i in keep:
        by[train[i]['source']].append(i)
    keep = sorted(sum([list(rng.permutation(v)[:a.per_source]) for v in by.values()], []))
keep = np.array(keep)
print('train rows', len(keep), collections.Counter(train[i]['source'] for i in keep), flush=True)
ttr = tokenize([train[i]['text'] for i in keep]); tte = tokenize([r['text'] for r in test])
ytr = torch.tensor([CI[train[i]['category']] for i in keep])

# warm-start head on frozen embeddings of the same rows (so the encoder never sees random-head gradients)
head = train_head(cache['Xtr'][keep], ytr.numpy(), epochs=30)
with torch.no_grad():
    res_frozen = report(head(cache['Xte']).argmax(1).numpy(), test, 'warm-start head on frozen encoder (same rows)')

enc = torch.jit.load(ENC)
enc_params = []
for n, q in enc.named_parameters():
    train_it = a.mode == 'all' or n != 'embeddings'
    q.requires_grad_(train_it)
    if train_it:
        enc_params.append(q)
print('encoder params trained: %d tensors, %d values' % (len(enc_params), sum(q.numel() for q in enc_params)))
opt = torch.optim.AdamW([{'params': enc_params, 'lr': a.lr_enc, 'weight_decay': 0.0},
                         {'params': head.parameters(), 'lr': a.lr_head, 'weight_decay': 0.0}])
steps_per_epoch = (len(ttr) + a.bs - 1) // a.bs
total = int(a.epochs * steps_per_epoch)
warm = max(1, total // 20)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm)))
lossf = torch.nn.CrossEntropyLoss(label_smoothing=0.1)


def evaluate(title):
    enc.eval(); head.eval()
    X = embed(enc, tte)  # full 128-token cap, as the C++ side
    with torch.no_grad():
        pred = head(X).argmax(1).numpy()
    return report(pred, test, title)


step, t1, hist = 0, time.time(), []
done = False
for ep in range(int(np.ceil(a.epochs))):
    for b in batches_by_length(ttr, a.bs, shuffle=True, rng=rng):
        if step >= total or time.time() - t1 > a.time_limit:
            done = True
            break
        enc.train(); head.train()
        ids, mask = pad(ttr, b, a.maxlen)
        loss = lossf(head(enc(ids, mask)), ytr[b])
        opt.zero_grad(); loss.backward(); opt.step(); sched.step()
        hist.append(float(loss)); step += 1
        if step % 100 == 0:
            el = time.time() - t1
            print(f'step {step}/{total} loss {np.mean(hist[-100:]):.3f} {el:.0f}s ({el/step*steps_per_epoch/60:.1f} min/epoch est)', flush=True)
        if a.eval_every and step % a.eval_every == 0:
            te = time.time(); evaluate(f'step {step}'); print('eval %.0fs' % (time.time() - te), flush=True)
    if done:
        break
train_s = time.time() - t1
print(f'trained {step} steps ({step/steps_per_epoch:.2f} epochs of {len(ttr)} rows) in {train_s:.0f}s', flush=True)
res = evaluate(f'fine-tuned ({a.tag})')
enc.eval()
enc.save(f'{WORK}/encoder_{a.tag}.pt'); torch.save(head.state_dict(), f'{WORK}/head_{a.tag}.pt')
json.dump({'args': vars(a), 'frozen': res_frozen, 'finetuned': res, 'train_seconds': train_s, 'steps': step,
           'rows': len(ttr)}, open(f'{WORK}/result_{a.tag}.json', 'w'), indent=1)
print('total %.0fs' % (time.time() - t0))
