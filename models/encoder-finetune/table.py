import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import WORK
S = ['mmlu_pro', 'stackexchange', 'medquad', 'clinc150', 'banking77']
b = json.load(open(f'{WORK}/baseline.json'))
cols = [('frozen (mix)', b['None']), ('frozen LOSO-SE', b['stackexchange'])]
for tag in ['all_e1', 'all_e3_lr2e-4', 'loso_se_all_e3', 'se_all_e2', 'mix_se_all_e1']:
    p = f'{WORK}/result_{tag}.json'
    if os.path.exists(p):
        r = json.load(open(p)); cols.append((f'{tag} frozen-head', r['frozen'])); cols.append((f'FT {tag} ({r["train_seconds"]/60:.0f} min)', r['finetuned']))
print('| source | ' + ' | '.join(c for c, _ in cols) + ' |')
print('|---|' + '---:|' * len(cols))
for s in S:
    print(f'| {s} | ' + ' | '.join(f'{100*r[s][0]:.1f} ({100*r[s][1]:.1f})' for _, r in cols) + ' |')
