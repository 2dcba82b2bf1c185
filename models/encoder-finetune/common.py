"""Shared data handling for the encoder fine-tuning experiment (README.md next to this file)."""
import json, os, numpy as np, torch
import sentencepiece as spm

CACHE = os.environ.get('MCPCLASS_CACHE_DIR') or os.path.join(
    os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'mcpclass')
WORK = os.environ.get('FT_WORK') or os.path.join(CACHE, 'finetune')  # outputs of the runs
os.makedirs(WORK, exist_ok=True)
ENC = f'{CACHE}/use-lite/encoder.pt'
TOK = f'{CACHE}/use-lite/tokenizer.model'
MIX = f'{CACHE}/data/training-mix.jsonl'
RQ = f'{CACHE}/data/router_queries.jsonl'
MMLU = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data', 'mmlu_pro_questions.jsonl')
MAXTOK = 128  # C++ default max_tokens (and the model's own limit)

CATS = sorted(['biology', 'business', 'chemistry', 'computer science', 'economics', 'engineering',
               'health', 'history', 'law', 'math', 'other', 'philosophy', 'physics', 'psychology'])
CI = {c: i for i, c in enumerate(CATS)}
_G = {"physics": "science", "chemistry": "science", "biology": "science", "engineering": "science",
      "business": "business", "economics": "business", "psychology": "other", "philosophy": "other",
      "other": "other"}
R8 = np.array([sorted(set(_G.get(c, c) for c in CATS)).index(_G.get(c, c)) for c in CATS])
SOURCES = ['mmlu_pro', 'stackexchange', 'medquad', 'clinc150', 'banking77']


def fnv1a(s):
    h = 14695981039346656037
    for b in s.encode():
        h ^= b
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def id_str(v):
    return v if isinstance(v, str) else json.dumps(v)  # boost::json::serialize of a number


def is_test(row):
    if row.get('split'):
        return row['split'] == 'test'
    return fnv1a(id_str(row['id'])) % 100 < 20


def load():
    """train rows (from the mix, held-out MMLU ids removed) and test rows."""
    train, test = [], []
    for l in open(MIX):
        r = json.loads(l)
        if not is_test(r):
            train.append(r)
    for l in open(MMLU):
        r = json.loads(l)
        if is_test(r):
            test.append({'text': r['text'], 'category': r['category'], 'source': 'mmlu_pro'})
    for l in open(RQ):
        r = json.loads(l)
        if r['split'] == 'test':
            test.append(r)
    return train, test


_sp = None


def tokenize(texts, maxtok=MAXTOK):
    global _sp
    if _sp is None:
        _sp = spm.SentencePieceProcessor(model_file=TOK)
    return [ids[:maxtok] for ids in _sp.encode(list(texts))]


def batches_by_length(toks, bs, shuffle=False, rng=None):
    idx = np.arange(len(toks))
    if shuffle:
        rng.shuffle(idx)
        chunk = bs * 50
        out = []
        for s in range(0, len(idx), chunk):
            c = sorted(idx[s:s + chunk], key=lambda i: len(toks[i]))
            out += [c[j:j + bs] for j in range(0, len(c), bs)]
        rng.shuffle(out)
        return out
    idx = sorted(idx, key=lambda i: len(toks[i]))
    return [idx[j:j + bs] for j in range(0, len(idx), bs)]


def pad(toks, b, maxtok=MAXTOK):
    T = max(1, max(min(len(toks[i]), maxtok) for i in b))
    ids = torch.zeros(len(b), T, dtype=torch.long)
    mask = torch.zeros(len(b), T, dtype=torch.long)
    for k, i in enumerate(b):
        t = toks[i][:maxtok]
        ids[k, :len(t)] = torch.tensor(t, dtype=torch.long)
        mask[k, :len(t)] = 1
    return ids, mask


@torch.no_grad()
def embed(enc, toks, bs=256, maxtok=MAXTOK):
    out = torch.zeros(len(toks), 512)
    for b in batches_by_length(toks, bs):
        ids, mask = pad(toks, b, maxtok)
        out[b] = enc(ids, mask)
    return out


class Head(torch.nn.Module):
    def __init__(self, hidden=512, n=len(CATS), drop=0.1):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(512, hidden), torch.nn.ReLU(),
                                       torch.nn.Dropout(drop), torch.nn.Linear(hidden, n))

    def forward(self, e):
        return self.net(e)


def train_head(X, y, epochs=30, lr=1e-3, bs=128, seed=0, wd=0.0, head=None):
    torch.manual_seed(seed)
    head = head or Head()
    opt = torch.optim.Adam(head.parameters(), lr=lr, weight_decay=wd)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs * ((len(X) + bs - 1) // bs))
    lossf = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
    yt = torch.tensor(y)
    for ep in range(epochs):
        head.train()
        perm = torch.randperm(len(X))
        for s in range(0, len(X), bs):
            b = perm[s:s + bs]
            opt.zero_grad()
            lossf(head(X[b]), yt[b]).backward()
            opt.step()
            sched.step()
    head.eval()
    return head


def report(pred, test, title):
    """pred: int array of predicted category index per test row. Returns {source: (r8, 14way, n)}."""
    y = np.array([CI[r['category']] for r in test])
    src = np.array([r['source'] for r in test])
    res = {}
    for s in SOURCES:
        m = src == s
        res[s] = (float((R8[pred[m]] == R8[y[m]]).mean()), float((pred[m] == y[m]).mean()), int(m.sum()))
    print(f'== {title}')
    for s, (a8, a14, n) in res.items():
        print(f'  {s:<14} n={n:5d} router8 {100*a8:5.1f}%  14-way {100*a14:5.1f}%')
    return res
