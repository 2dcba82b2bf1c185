"""Write a fine-tuned TorchScript encoder (encoder_<tag>.pt) as use-lite.safetensors with the exact
tensor names/shapes/metadata of ~/.cache/mcpclass/use-lite/use-lite.safetensors (what the native
oneDNN encoder reads). usage: export_safetensors.py IN.pt OUT.safetensors"""
import os, sys, json, struct, torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import CACHE
ref = f'{CACHE}/use-lite/use-lite.safetensors'
f = open(ref, 'rb'); n = struct.unpack('<Q', f.read(8))[0]; rh = json.loads(f.read(n))
m = torch.jit.load(sys.argv[1])
t = dict(m.named_parameters()); t.update(dict(m.named_buffers()))
header, blobs, off = {'__metadata__': rh['__metadata__']}, [], 0
for k in sorted(x for x in rh if x != '__metadata__'):
    a = t[k].detach().float().reshape(rh[k]['shape']).numpy().astype('<f4').tobytes()
    header[k] = {'dtype': 'F32', 'shape': rh[k]['shape'], 'data_offsets': [off, off + len(a)]}
    blobs.append(a); off += len(a)
h = json.dumps(header, separators=(',', ':')).encode(); h += b' ' * (-len(h) % 8)
with open(sys.argv[2], 'wb') as o:
    o.write(struct.pack('<Q', len(h))); o.write(h); [o.write(b) for b in blobs]
print('wrote', sys.argv[2], len(header) - 1, 'tensors')
