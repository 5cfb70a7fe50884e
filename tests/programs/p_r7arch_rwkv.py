"""RWKV-4, shrunk from BlinkDL/RWKV-LM: RWKV-v4/src/model.py (GPT-mode RWKV_TimeMix with the
fancy time_decay / time_first / time_mix init, nn.ZeroPad2d((0, 0, 1, -1)) time shift,
torch.jit.ScriptModule + script_method, RWKV_ChannelMix with squared ReLU, Block with ln0, GPT
with the L2Wrap autograd.Function) where the CUDA WKV kernel is replaced by its loop written in
torch (same max-shifted recurrence as cuda/wkv_cuda.cu), trained a few steps, saved with
torch.save, then loaded by RWKV_in_150_lines.py's RWKV_RNN (SimpleNamespace weight tree,
time_decay = -exp(.), time_mixing/channel_mixing in RNN mode, sample_logits with top-p), whose
logits must match GPT mode token by token. Character-level data instead of the 20B tokenizer."""
# ruff: noqa: E501  (upstream's own line lengths and names, kept)
import importlib
import math
import os
import tempfile
import types

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")
np.set_printoptions(precision=4, suppress=True, linewidth=200)


# ---------------- GPT mode (RWKV-v4/src/model.py) ----------------
def RUN_WKV(B, T, C, w, u, k, v):
    # the forward of wkv_cuda.cu's kernel_forward, with w = -exp(time_decay) as WKV.forward does
    w = -torch.exp(w.contiguous())
    p = torch.zeros(B, C)
    q = torch.zeros(B, C)
    o = torch.full((B, C), -1e38)
    ys = []
    for i in range(T):
        kk, vv = k[:, i], v[:, i]
        no = torch.maximum(o, u + kk)
        A = torch.exp(o - no)
        Bv = torch.exp(u + kk - no)
        ys.append((A * p + Bv * vv) / (A * q + Bv))
        no = torch.maximum(w + o, kk)
        A = torch.exp(w + o - no)
        Bv = torch.exp(kk - no)
        p = A * p + Bv * vv
        q = A * q + Bv
        o = no
    return torch.stack(ys, 1)


class RWKV_TimeMix(torch.jit.ScriptModule):
    def __init__(self, config, layer_id):
        super().__init__()
        self.layer_id = layer_id
        self.ctx_len = config.ctx_len
        self.n_embd = config.n_embd

        attn_sz = config.n_embd

        with torch.no_grad():  # fancy init
            ratio_0_to_1 = (layer_id / (config.n_layer - 1))  # 0 to 1
            ratio_1_to_almost0 = (1.0 - (layer_id / config.n_layer))  # 1 to ~0

            # fancy time_decay
            decay_speed = torch.ones(attn_sz)
            for h in range(attn_sz):
                decay_speed[h] = -5 + 8 * (h / (attn_sz - 1)) ** (0.7 + 1.3 * ratio_0_to_1)
            self.time_decay = nn.Parameter(decay_speed)

            # fancy time_first
            zigzag = (torch.tensor([(i + 1) % 3 - 1 for i in range(attn_sz)]) * 0.5)
            self.time_first = nn.Parameter(torch.ones(attn_sz) * math.log(0.3) + zigzag)

            # fancy time_mix
            x = torch.ones(1, 1, config.n_embd)
            for i in range(config.n_embd):
                x[0, 0, i] = i / config.n_embd
            self.time_mix_k = nn.Parameter(torch.pow(x, ratio_1_to_almost0))
            self.time_mix_v = nn.Parameter(torch.pow(x, ratio_1_to_almost0) + 0.3 * ratio_0_to_1)
            self.time_mix_r = nn.Parameter(torch.pow(x, 0.5 * ratio_1_to_almost0))

        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))

        self.key = nn.Linear(config.n_embd, attn_sz, bias=False)
        self.value = nn.Linear(config.n_embd, attn_sz, bias=False)
        self.receptance = nn.Linear(config.n_embd, attn_sz, bias=False)

        self.output = nn.Linear(attn_sz, config.n_embd, bias=False)

        self.key.scale_init = 0
        self.receptance.scale_init = 0
        self.output.scale_init = 0

    @torch.jit.script_method
    def jit_func(self, x):

        # Mix x with the previous timestep to produce xk, xv, xr
        xx = self.time_shift(x)
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        xv = x * self.time_mix_v + xx * (1 - self.time_mix_v)
        xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)

        # Use xk, xv, xr to produce k, v, r
        k = self.key(xk)
        v = self.value(xv)
        r = self.receptance(xr)
        sr = torch.sigmoid(r)

        return sr, k, v

    def forward(self, x):
        B, T, C = x.size()  # x = (Batch,Time,Channel)

        sr, k, v = self.jit_func(x)

        rwkv = sr * RUN_WKV(B, T, C, self.time_decay, self.time_first, k, v)
        rwkv = self.output(rwkv)
        return rwkv


class RWKV_ChannelMix(torch.jit.ScriptModule):
    def __init__(self, config, layer_id):
        super().__init__()
        self.layer_id = layer_id

        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))

        with torch.no_grad():  # fancy init of time_mix
            ratio_1_to_almost0 = (1.0 - (layer_id / config.n_layer))  # 1 to ~0

            x = torch.ones(1, 1, config.n_embd)
            for i in range(config.n_embd):
                x[0, 0, i] = i / config.n_embd

            self.time_mix_k = nn.Parameter(torch.pow(x, ratio_1_to_almost0))
            self.time_mix_r = nn.Parameter(torch.pow(x, ratio_1_to_almost0))

        hidden_sz = 4 * config.n_embd
        self.key = nn.Linear(config.n_embd, hidden_sz, bias=False)
        self.receptance = nn.Linear(config.n_embd, config.n_embd, bias=False)
        self.value = nn.Linear(hidden_sz, config.n_embd, bias=False)

        self.value.scale_init = 0
        self.receptance.scale_init = 0

    @torch.jit.script_method
    def forward(self, x):
        xx = self.time_shift(x)
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)

        k = self.key(xk)
        k = torch.square(torch.relu(k))
        kv = self.value(k)

        rkv = torch.sigmoid(self.receptance(xr)) * kv
        return rkv


class Block(nn.Module):
    def __init__(self, config, layer_id):
        super().__init__()
        self.config = config
        self.layer_id = layer_id

        self.ln1 = nn.LayerNorm(config.n_embd)
        self.ln2 = nn.LayerNorm(config.n_embd)

        if self.layer_id == 0:
            self.ln0 = nn.LayerNorm(config.n_embd)

        self.att = RWKV_TimeMix(config, layer_id)

        self.ffn = RWKV_ChannelMix(config, layer_id)

    def forward(self, x):
        if self.layer_id == 0:
            x = self.ln0(x)
        x = x + self.att(self.ln1(x))
        x = x + self.ffn(self.ln2(x))
        return x


class L2Wrap(torch.autograd.Function):
    @staticmethod
    def forward(ctx, loss, y):
        ctx.save_for_backward(y)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        y = ctx.saved_tensors[0]
        # to encourage the logits to be close to 0
        factor = 1e-4 / (y.shape[0] * y.shape[1])
        maxx, ids = torch.max(y, -1, keepdim=True)
        gy = torch.zeros_like(y)
        gy.scatter_(-1, ids, maxx * factor)
        return (grad_output, gy)


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.step = 0
        self.config = config

        self.emb = nn.Embedding(config.vocab_size, config.n_embd)

        self.blocks = nn.Sequential(*[Block(config, i)
                                    for i in range(config.n_layer)])

        self.ln_out = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

        self.ctx_len = config.ctx_len

    def forward(self, idx, targets=None):
        idx = idx.to(self.emb.weight.device)

        self.step += 1
        B, T = idx.size()
        assert T <= self.ctx_len, "Cannot forward, because len(input) > model ctx_len."

        x = self.emb(idx)
        x = self.blocks(x)
        x = self.ln_out(x)
        x = self.head(x)

        if targets is None:
            return x
        loss = F.cross_entropy(x.view(-1, x.size(-1)), targets.to(x.device).view(-1))
        return L2Wrap.apply(loss, x)


# ---------------- RNN mode (RWKV_in_150_lines.py) ----------------
class RWKV_RNN(torch.jit.ScriptModule):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.eval()  # set torch to inference mode

        w = torch.load(args.MODEL_NAME + '.pth', map_location='cpu')
        for k in w.keys():
            if '.time_' in k:
                w[k] = w[k].squeeze()
            if '.time_decay' in k:
                w[k] = -torch.exp(w[k].float())  # the real time decay is like e^{-e^x}
            else:
                w[k] = w[k].float()  # convert to f32 type

        self.w = types.SimpleNamespace()  # set self.w from w
        self.w.blocks = {}
        for k in w.keys():  # example: "blocks.0.att.time_first" => self.w.blocks[0].att.time_first
            parts = k.split('.')
            last = parts.pop()
            here = self.w
            for p in parts:
                if p.isdigit():
                    p = int(p)
                    if p not in here:
                        here[p] = types.SimpleNamespace()
                    here = here[p]
                else:
                    if not hasattr(here, p):
                        setattr(here, p, types.SimpleNamespace())
                    here = getattr(here, p)
            setattr(here, last, w[k])

    def layer_norm(self, x, w):
        return F.layer_norm(x, (self.args.n_embd,), weight=w.weight, bias=w.bias)

    @torch.jit.script_method
    def channel_mixing(self, x, state, i: int, time_mix_k, time_mix_r, kw, vw, rw):
        xk = x * time_mix_k + state[5 * i + 0] * (1 - time_mix_k)
        xr = x * time_mix_r + state[5 * i + 0] * (1 - time_mix_r)
        state[5 * i + 0] = x
        r = torch.sigmoid(rw @ xr)
        k = torch.square(torch.relu(kw @ xk))  # square relu, primer paper
        return r * (vw @ k)

    @torch.jit.script_method
    def time_mixing(self, x, state, i: int, time_mix_k, time_mix_v, time_mix_r, time_first, time_decay, kw, vw, rw, ow):
        xk = x * time_mix_k + state[5 * i + 1] * (1 - time_mix_k)
        xv = x * time_mix_v + state[5 * i + 1] * (1 - time_mix_v)
        xr = x * time_mix_r + state[5 * i + 1] * (1 - time_mix_r)
        state[5 * i + 1] = x
        r = torch.sigmoid(rw @ xr)
        k = kw @ xk
        v = vw @ xv

        aa = state[5 * i + 2]
        bb = state[5 * i + 3]
        pp = state[5 * i + 4]
        ww = time_first + k
        qq = torch.maximum(pp, ww)
        e1 = torch.exp(pp - qq)
        e2 = torch.exp(ww - qq)
        a = e1 * aa + e2 * v
        b = e1 * bb + e2
        wkv = a / b
        ww = pp + time_decay
        qq = torch.maximum(ww, k)
        e1 = torch.exp(ww - qq)
        e2 = torch.exp(k - qq)
        state[5 * i + 2] = e1 * aa + e2 * v
        state[5 * i + 3] = e1 * bb + e2
        state[5 * i + 4] = qq
        return ow @ (r * wkv)

    def forward(self, token, state):
        with torch.no_grad():
            if state is None:
                state = torch.zeros(self.args.n_layer * 5, self.args.n_embd)
                for i in range(self.args.n_layer):
                    state[5 * i + 4] = -1e30  # -infinity

            x = self.w.emb.weight[token]
            x = self.layer_norm(x, self.w.blocks[0].ln0)
            for i in range(self.args.n_layer):
                att = self.w.blocks[i].att
                x = x + self.time_mixing(self.layer_norm(x, self.w.blocks[i].ln1), state, i,
                                         att.time_mix_k, att.time_mix_v, att.time_mix_r, att.time_first, att.time_decay,
                                         att.key.weight, att.value.weight, att.receptance.weight, att.output.weight)
                ffn = self.w.blocks[i].ffn
                x = x + self.channel_mixing(self.layer_norm(x, self.w.blocks[i].ln2), state, i,
                                            ffn.time_mix_k, ffn.time_mix_r,
                                            ffn.key.weight, ffn.value.weight, ffn.receptance.weight)

            x = self.w.head.weight @ self.layer_norm(x, self.w.ln_out)
            return x.float(), state


def sample_logits(out, temperature=1.0, top_p=0.8):
    probs = F.softmax(out, dim=-1).numpy()
    sorted_probs = np.sort(probs)[::-1]
    cumulative_probs = np.cumsum(sorted_probs)
    cutoff = float(sorted_probs[np.argmax(cumulative_probs > top_p)])
    probs[probs < cutoff] = 0
    if temperature != 1.0:
        probs = probs.pow(1.0 / temperature)
    probs = probs / np.sum(probs)
    out = np.random.choice(a=len(probs), p=probs)
    return out


torch.manual_seed(0)
np.random.seed(0)
text = "in the beginning was the word and the word was with rwkv. " * 3
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text])
config = types.SimpleNamespace(vocab_size=len(chars), n_embd=12, n_layer=2, ctx_len=16)
model = GPT(config)
print("time_decay", model.blocks[1].att.time_decay)
print("time_first", model.blocks[0].att.time_first)
print("time_mix_v", model.blocks[1].att.time_mix_v.flatten()[:4])
print("params", sum(p.numel() for p in model.parameters()))
print("keys", list(model.state_dict())[:14])

opt = torch.optim.Adam(model.parameters(), lr=2e-3, betas=(0.9, 0.99), eps=1e-8)
for step in range(6):
    ix = torch.randint(len(data) - config.ctx_len - 1, (3,))
    x = torch.stack([data[i:i + config.ctx_len] for i in ix])
    y = torch.stack([data[i + 1:i + config.ctx_len + 1] for i in ix])
    loss = model(x, y)
    opt.zero_grad()
    loss.backward()
    if step == 0:
        print("loss grad_fn", loss.grad_fn.name())
        for n in ["blocks.0.att.time_decay", "blocks.0.att.time_first", "blocks.1.att.time_mix_k",
                  "blocks.1.ffn.key.weight", "head.weight"]:
            print(n, "%.6f" % model.get_parameter(n).grad.norm().item())
    opt.step()
    print("step %d loss %.5f" % (step, loss.item()))
print("model.step", model.step)

with tempfile.TemporaryDirectory() as d:
    args = types.SimpleNamespace(MODEL_NAME=os.path.join(d, "rwkv-tiny"), n_layer=2, n_embd=12)
    torch.save(model.state_dict(), args.MODEL_NAME + '.pth')
    rnn = RWKV_RNN(args)
print("rnn blocks", sorted(rnn.w.blocks), sorted(vars(rnn.w.blocks[0].att)))
print("rnn time_decay", rnn.w.blocks[0].att.time_decay[:4])

ctx = data[:10]
with torch.no_grad():
    gpt_logits = model(ctx[None])[0]
state = None
rnn_logits = []
for token in ctx.tolist():
    out, state = rnn.forward(token, state)
    rnn_logits.append(out)
rnn_logits = torch.stack(rnn_logits)
print("rnn == gpt", torch.allclose(rnn_logits, gpt_logits, atol=1e-4), (rnn_logits - gpt_logits).abs().max().item() < 1e-4)
print("last logits", rnn_logits[-1][:6])
print("state", state.shape, state[4][:3], state[9][:3])

all_tokens = []
out_last = out
for i in range(12):
    token = sample_logits(out_last, temperature=1.0, top_p=0.7)
    all_tokens += [token]
    out_last, state = rnn.forward(token, state)
print("generated", repr("".join(chars[t] for t in all_tokens)))
