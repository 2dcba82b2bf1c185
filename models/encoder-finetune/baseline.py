"""Step 1: frozen encoder embeddings + MLP head. Caches tokens and embeddings in the work directory (common.WORK)."""
import os, sys, time, json, numpy as np, torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *
torch.set_num_threads(1)
t0 = time.time()
train, test = load()
print('train rows', len(train), 'test rows', len(test))
import collections
print(collections.Counter(r['source'] for r in train))
ttr = tokenize([r['text'] for r in train]); tte = tokenize([r['text'] for r in test])
print('tokenized %.1fs' % (time.time() - t0))
enc = torch.jit.load(ENC).eval()
t1 = time.time(); Xtr = embed(enc, ttr); Xte = embed(enc, tte)
print('embedded %d rows in %.1fs' % (len(ttr) + len(tte), time.time() - t1))
torch.save({'Xtr': Xtr, 'Xte': Xte}, f'{WORK}/cache.pt')
ytr = np.array([CI[r['category']] for r in train])
res = {}
for excl in [None, 'stackexchange']:
    keep = np.array([r['source'] != excl for r in train])
    t2 = time.time()
    head = train_head(Xtr[keep], ytr[keep], epochs=30)
    with torch.no_grad():
        pred = head(Xte).argmax(1).numpy()
    title = f'baseline frozen, head trained ({time.time()-t2:.0f}s) ' + ('on full mix' if excl is None else f'without {excl}')
    res[str(excl)] = report(pred, test, title)
    torch.save(head.state_dict(), f'{WORK}/head_frozen_{excl}.pt')
json.dump(res, open(f'{WORK}/baseline.json', 'w'), indent=1)
print('total %.0fs' % (time.time() - t0))
