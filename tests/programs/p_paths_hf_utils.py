"""HuggingFace-transformers-style utility code: set_seed, the TF32/determinism switches,
version parsing, ACT2FN, get_extended_attention_mask with finfo.min, an SDPA attention block
under sdpa_kernel, gradient checkpointing, torch.jit/compiler guards, parameter counting."""
import importlib
import os
import random
from collections import OrderedDict

import numpy as np

LIB = os.environ.get("TORCH_LIB", "torch")
torch = importlib.import_module(LIB)
nn = importlib.import_module(LIB + ".nn")
F = importlib.import_module(LIB + ".nn.functional")
attention = importlib.import_module(LIB + ".nn.attention")
activation = importlib.import_module(LIB + ".nn.modules.activation")
checkpoint = importlib.import_module(LIB + ".utils.checkpoint").checkpoint
overrides = importlib.import_module(LIB + ".overrides")
grad_mode = importlib.import_module(LIB + ".autograd.grad_mode")
ttypes = importlib.import_module(LIB + ".types")


def set_seed(seed: int, deterministic: bool = False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.use_deterministic_algorithms(True)
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def torch_version_tuple():
    base = torch.__version__.split("+")[0]
    return tuple(int(p) for p in base.split(".")[:2])


class NewGELUActivation(nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(
            (2.0 / 3.141592653589793) ** 0.5 * (input + 0.044715 * torch.pow(input, 3.0))))


class ClassInstantier(OrderedDict):
    def __getitem__(self, key):
        content = super().__getitem__(key)
        cls, kwargs = content if isinstance(content, tuple) else (content, {})
        return cls(**kwargs)


ACT2CLS = {"gelu": nn.GELU, "gelu_new": NewGELUActivation, "relu": nn.ReLU, "silu": nn.SiLU,
           "tanh": nn.Tanh, "gelu_pytorch_tanh": (nn.GELU, {"approximate": "tanh"}),
           "quick_gelu": (nn.GELU, {"approximate": "none"}), "leaky_relu": nn.LeakyReLU,
           "mish": nn.Mish, "sigmoid": nn.Sigmoid}
ACT2FN = ClassInstantier(ACT2CLS)


def get_extended_attention_mask(attention_mask, dtype):
    extended = attention_mask[:, None, None, :]
    extended = extended.to(dtype=dtype)
    return (1.0 - extended) * torch.finfo(dtype).min


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads, act):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.act = ACT2FN[act]
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.gradient_checkpointing = False

    def _attn(self, x, mask):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return y.transpose(1, 2).contiguous().view(b, t, c)

    def forward(self, x, mask):
        if self.gradient_checkpointing and self.training:
            y = checkpoint(self._attn, x, mask, use_reentrant=False)
        else:
            y = self._attn(x, mask)
        return self.norm(x + self.act(self.out(y)))


def num_parameters(module, only_trainable=False, exclude_embeddings=False):
    return sum(p.numel() for p in module.parameters()
               if p.requires_grad or not only_trainable)


def get_parameter_dtype(module):
    for p in module.parameters():
        if p.is_floating_point():
            return p.dtype


@torch.jit.script
def fused_add_tanh(a, b):
    return torch.tanh(a + b)


def main():
    set_seed(42, deterministic=True)
    print("deterministic", torch.are_deterministic_algorithms_enabled())
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.set_float32_matmul_precision("high")
    print("precision", torch.get_float32_matmul_precision())
    print("version ok", len(torch_version_tuple()) == 2, isinstance(torch.__version__, str))
    print("cuda", torch.cuda.is_available(), torch.version.cuda)
    print("mps", torch.backends.mps.is_available(), "is_built", torch.backends.mps.is_built())
    print("sdp", torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled())
    print("compiling", torch.compiler.is_compiling(), torch.jit.is_scripting(),
          torch.jit.is_tracing())
    print("names", [type(ACT2FN[k]).__name__ for k in sorted(ACT2CLS)])
    print("MHA path", activation.MultiheadAttention is nn.MultiheadAttention)
    print("Number", isinstance(3, ttypes.Number.__args__))

    ids = torch.randint(0, 50, (2, 6))
    mask = torch.ones(2, 6, dtype=torch.long)
    mask[1, 4:] = 0
    emb = nn.Embedding(50, 16, padding_idx=0)
    x = emb(ids)
    ext = get_extended_attention_mask(mask, x.dtype)
    print("ext", ext.shape, ext.dtype, ext[1, 0, 0])
    model = nn.ModuleList([SelfAttention(16, 4, a) for a in ("gelu", "gelu_new", "silu")])
    print(model)
    print("params", num_parameters(model), get_parameter_dtype(model))

    h = x
    for layer in model:
        h = layer(h, ext)
    print("h", h.sum(dim=-1))
    with attention.sdpa_kernel(attention.SDPBackend.MATH):
        print("inside", torch.backends.cuda.flash_sdp_enabled(),
              torch.backends.cuda.math_sdp_enabled())
        h2 = model[0](x, ext)
    print("outside", torch.backends.cuda.flash_sdp_enabled())
    print("same", torch.allclose(h2, model[0](x, ext)))

    for layer in model:
        layer.gradient_checkpointing = True
    model.train()
    out = x
    for layer in model:
        out = layer(out, ext)
    loss = out.pow(2).mean()
    loss.backward()
    print("loss %.5f" % loss.item())
    print("grad", model[0].qkv.weight.grad.norm(), emb.weight.grad[0].abs().sum())
    print("has_torch_function", overrides.has_torch_function((x, 1)),
          overrides.is_tensor_like(x), overrides.is_tensor_like(3))
    with grad_mode.no_grad():
        y = fused_add_tanh(x, x)
    print("no_grad", y.requires_grad, grad_mode.set_grad_enabled.__name__)
    print("RESULT:", fused_add_tanh(torch.ones(2), torch.zeros(2)))


if __name__ == "__main__":
    main()
