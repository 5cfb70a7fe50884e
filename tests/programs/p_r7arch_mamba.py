"""Mamba in pure PyTorch, shrunk from johnma2006/mamba-minimal model.py (ModelArgs with the 'auto'
dt_rank and vocab padding, Mamba with tied lm_head, ResidualBlock, MambaBlock: in_proj split,
depthwise causal Conv1d, x_proj -> (delta, B, C), softplus(dt_proj), A = -exp(A_log), the
sequential selective_scan, RMSNorm) and its generate() (top-k + multinomial sampling). The einops
rearrange/repeat/einsum calls are written as transpose/repeat/torch.einsum. Tiny char LM training."""
# ruff: noqa: E501, E741  (upstream's own line lengths and names, kept)
import importlib
import math
import os
from dataclasses import dataclass
from typing import Union

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = torch.nn
F = importlib.import_module(LIB + ".nn.functional")


@dataclass
class ModelArgs:
    d_model: int
    n_layer: int
    vocab_size: int
    d_state: int = 16
    expand: int = 2
    dt_rank: Union[int, str] = 'auto'
    d_conv: int = 4
    pad_vocab_size_multiple: int = 8
    conv_bias: bool = True
    bias: bool = False

    def __post_init__(self):
        self.d_inner = int(self.expand * self.d_model)

        if self.dt_rank == 'auto':
            self.dt_rank = math.ceil(self.d_model / 16)

        if self.vocab_size % self.pad_vocab_size_multiple != 0:
            self.vocab_size += (self.pad_vocab_size_multiple
                                - self.vocab_size % self.pad_vocab_size_multiple)


class Mamba(nn.Module):
    def __init__(self, args: ModelArgs):
        """Full Mamba model."""
        super().__init__()
        self.args = args

        self.embedding = nn.Embedding(args.vocab_size, args.d_model)
        self.layers = nn.ModuleList([ResidualBlock(args) for _ in range(args.n_layer)])
        self.norm_f = RMSNorm(args.d_model)

        self.lm_head = nn.Linear(args.d_model, args.vocab_size, bias=False)
        self.lm_head.weight = self.embedding.weight  # Tie output projection to embedding weights.

    def forward(self, input_ids):
        x = self.embedding(input_ids)

        for layer in self.layers:
            x = layer(x)

        x = self.norm_f(x)
        logits = self.lm_head(x)

        return logits

    def generate(self, input_ids, n_tokens_to_generate=8, sample=True, top_k=4):
        self.eval()
        for token_n in range(n_tokens_to_generate):
            with torch.no_grad():
                indices_to_input = input_ids
                next_token_logits = self(indices_to_input)[:, -1]

            probs = F.softmax(next_token_logits, dim=-1)
            (batch, vocab_size) = probs.shape

            if top_k is not None:
                (values, indices) = torch.topk(probs, k=top_k)
                probs[probs < values[:, -1, None]] = 0
                probs = probs / probs.sum(axis=1, keepdims=True)

            if sample:
                next_indices = torch.multinomial(probs, num_samples=1)
            else:
                next_indices = torch.argmax(probs, dim=-1)[:, None]

            input_ids = torch.cat([input_ids, next_indices], dim=1)
        return input_ids


class ResidualBlock(nn.Module):
    def __init__(self, args: ModelArgs):
        """Simple block wrapping Mamba block with normalization and residual connection."""
        super().__init__()
        self.args = args
        self.mixer = MambaBlock(args)
        self.norm = RMSNorm(args.d_model)

    def forward(self, x):
        output = self.mixer(self.norm(x)) + x

        return output


class MambaBlock(nn.Module):
    def __init__(self, args: ModelArgs):
        """A single Mamba block, as described in Figure 3 in Section 3.4 in the Mamba paper [1]."""
        super().__init__()
        self.args = args

        self.in_proj = nn.Linear(args.d_model, args.d_inner * 2, bias=args.bias)

        self.conv1d = nn.Conv1d(
            in_channels=args.d_inner,
            out_channels=args.d_inner,
            bias=args.conv_bias,
            kernel_size=args.d_conv,
            groups=args.d_inner,
            padding=args.d_conv - 1,
        )

        # x_proj takes in `x` and outputs the input-specific Δ, B, C
        self.x_proj = nn.Linear(args.d_inner, args.dt_rank + args.d_state * 2, bias=False)

        # dt_proj projects Δ from dt_rank to d_in
        self.dt_proj = nn.Linear(args.dt_rank, args.d_inner, bias=True)

        A = torch.arange(1, args.d_state + 1).repeat(args.d_inner, 1)  # repeat(.., 'n -> d n')
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(args.d_inner))
        self.out_proj = nn.Linear(args.d_inner, args.d_model, bias=args.bias)

    def forward(self, x):
        (b, l, d) = x.shape

        x_and_res = self.in_proj(x)  # shape (b, l, 2 * d_in)
        (x, res) = x_and_res.split(split_size=[self.args.d_inner, self.args.d_inner], dim=-1)

        x = x.transpose(1, 2)  # 'b l d_in -> b d_in l'
        x = self.conv1d(x)[:, :, :l]
        x = x.transpose(1, 2)  # 'b d_in l -> b l d_in'

        x = F.silu(x)

        y = self.ssm(x)

        y = y * F.silu(res)

        output = self.out_proj(y)

        return output

    def ssm(self, x):
        (d_in, n) = self.A_log.shape

        A = -torch.exp(self.A_log.float())  # shape (d_in, n)
        D = self.D.float()

        x_dbl = self.x_proj(x)  # (b, l, dt_rank + 2*n)

        (delta, B, C) = x_dbl.split(split_size=[self.args.dt_rank, n, n], dim=-1)
        delta = F.softplus(self.dt_proj(delta))  # (b, l, d_in)

        y = self.selective_scan(x, delta, A, B, C, D)

        return y

    def selective_scan(self, u, delta, A, B, C, D):
        (b, l, d_in) = u.shape
        n = A.shape[1]

        deltaA = torch.exp(torch.einsum('bld,dn->bldn', delta, A))
        deltaB_u = torch.einsum('bld,bln,bld->bldn', delta, B, u)

        x = torch.zeros((b, d_in, n), device=deltaA.device)
        ys = []
        for i in range(l):
            x = deltaA[:, i] * x + deltaB_u[:, i]
            y = torch.einsum('bdn,bn->bd', x, C[:, i, :])
            ys.append(y)
        y = torch.stack(ys, dim=1)  # shape (b, l, d_in)

        y = y + u * D

        return y


class RMSNorm(nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        output = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

        return output


torch.manual_seed(0)
text = "the quick brown fox jumps over the lazy dog. " * 4
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)

args = ModelArgs(d_model=16, n_layer=2, vocab_size=len(chars), d_state=4, d_conv=3)
print(args)
model = Mamba(args)
print("params", sum(p.numel() for p in model.parameters()))
print("tied", model.lm_head.weight is model.embedding.weight)
sd = model.state_dict()
print("keys", len(sd), [k for k in sd if k.startswith("layers.0.")])
print("A_log", sd["layers.0.mixer.A_log"].dtype, sd["layers.0.mixer.A_log"][0])

opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
block = 12
for step in range(8):
    ix = torch.randint(len(data) - block - 1, (4,))
    xb = torch.stack([data[i:i + block] for i in ix])
    yb = torch.stack([data[i + 1:i + block + 1] for i in ix])
    logits = model(xb)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), yb.view(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if step == 0:
        print("logits", logits.shape, logits.grad_fn.name())
        for name in ["embedding.weight", "layers.0.mixer.A_log", "layers.0.mixer.D",
                     "layers.0.mixer.conv1d.weight", "layers.1.mixer.dt_proj.bias", "norm_f.weight"]:
            print(name, "%.6f" % model.get_parameter(name).grad.norm().item())
    opt.step()
    print("step %d loss %.5f" % (step, loss.item()))

# causality: changing a later token leaves earlier logits unchanged
with torch.no_grad():
    a = model(data[None, :10])
    b_ids = data[None, :10].clone()
    b_ids[0, 7] = (b_ids[0, 7] + 1) % len(chars)
    b = model(b_ids)
print("causal", torch.allclose(a[:, :7], b[:, :7], atol=1e-6), (a[:, 7:] - b[:, 7:]).abs().max().item() > 0)

prompt = data[None, :5]
out = model.generate(prompt, n_tokens_to_generate=6, sample=True, top_k=4)
print("sampled", out.tolist(), "".join(chars[i] for i in out[0].tolist()))
out = model.generate(prompt, n_tokens_to_generate=6, sample=False)
print("greedy", "".join(chars[i] for i in out[0].tolist()))
