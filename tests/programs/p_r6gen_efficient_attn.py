"""Efficient attention variants from lucidrains' repositories, with einops' rearrange/repeat written
out as reshape/permute/expand: performer-pytorch (FAVOR+ softmax and generalized ReLU kernels,
gaussian orthogonal random features via QR, non-causal and chunked causal linear attention,
projection redraw), linformer (sequence-length projections of keys/values, shared kv, shorter
inputs), reformer-pytorch's LSHAttention (random-rotation hashing, sort_key_val, gather-based
batched_index_select, look_one_back chunks, self/bucket masks, unsort and multi-round
logsumexp combination) and perceiver-pytorch (Fourier position encoding, latent cross-attention
with a mask, GEGLU feed-forward, a few training steps); compared with exact softmax attention."""
import importlib
import math
from functools import partial
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim
pi = math.pi


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


def softmax_kernel(data, *, projection_matrix, is_query, normalize_data=True, eps=1e-4,
                   device=None):
    b, h, *_ = data.shape
    data_normalizer = (data.shape[-1] ** -0.25) if normalize_data else 1.
    ratio = (projection_matrix.shape[0] ** -0.5)
    projection = projection_matrix.expand(b, h, *projection_matrix.shape)
    projection = projection.type_as(data)
    data_dash = torch.einsum('...id,...jd->...ij', (data_normalizer * data), projection)
    diag_data = data ** 2
    diag_data = torch.sum(diag_data, dim=-1)
    diag_data = (diag_data / 2.0) * (data_normalizer ** 2)
    diag_data = diag_data.unsqueeze(dim=-1)
    if is_query:
        data_dash = ratio * (
            torch.exp(data_dash - diag_data
                      - torch.amax(data_dash, dim=-1, keepdim=True).detach()) + eps)
    else:
        data_dash = ratio * (
            torch.exp(data_dash - diag_data
                      - torch.amax(data_dash, dim=(-1, -2), keepdim=True).detach()) + eps)
    return data_dash.type_as(data)


def generalized_kernel(data, *, projection_matrix, kernel_fn=nn.ReLU(), kernel_epsilon=0.001,
                       normalize_data=True, device=None):
    b, h, *_ = data.shape
    data_normalizer = (data.shape[-1] ** -0.25) if normalize_data else 1.
    if projection_matrix is None:
        return kernel_fn(data_normalizer * data) + kernel_epsilon
    projection = projection_matrix.expand(b, h, *projection_matrix.shape)
    projection = projection.type_as(data)
    data_dash = torch.einsum('...id,...jd->...ij', (data_normalizer * data), projection)
    data_prime = kernel_fn(data_dash) + kernel_epsilon
    return data_prime.type_as(data)


def orthogonal_matrix_chunk(cols, device=None):
    unstructured_block = torch.randn((cols, cols), device=device)
    q, r = torch.linalg.qr(unstructured_block.cpu(), mode='reduced')
    q, r = map(lambda t: t.to(device), (q, r))
    return q.t()


def gaussian_orthogonal_random_matrix(nb_rows, nb_columns, scaling=0, device=None):
    nb_full_blocks = int(nb_rows / nb_columns)
    block_list = []
    for _ in range(nb_full_blocks):
        q = orthogonal_matrix_chunk(nb_columns, device=device)
        block_list.append(q)
    remaining_rows = nb_rows - nb_full_blocks * nb_columns
    if remaining_rows > 0:
        q = orthogonal_matrix_chunk(nb_columns, device=device)
        block_list.append(q[:remaining_rows])
    final_matrix = torch.cat(block_list)
    if scaling == 0:
        multiplier = torch.randn((nb_rows, nb_columns), device=device).norm(dim=1)
    elif scaling == 1:
        multiplier = math.sqrt((float(nb_columns))) * torch.ones((nb_rows,), device=device)
    else:
        raise ValueError(f'Invalid scaling {scaling}')
    return torch.diag(multiplier) @ final_matrix


def linear_attention(q, k, v):
    k_cumsum = k.sum(dim=-2)
    D_inv = 1. / torch.einsum('...nd,...d->...n', q, k_cumsum.type_as(q))
    context = torch.einsum('...nd,...ne->...de', k, v)
    out = torch.einsum('...de,...nd,...n->...ne', context, q, D_inv)
    return out


def causal_linear_attention_noncuda(q, k, v, chunk_size=128, eps=1e-6):
    last_k_cumsum = 0
    last_context_cumsum = 0
    outs = []
    for q, k, v in zip(*map(lambda t: t.chunk(chunk_size, dim=-2), (q, k, v))):
        k_cumsum = last_k_cumsum + k.cumsum(dim=-2)
        D_inv = 1. / torch.einsum('...nd,...nd->...n', q, k_cumsum.type_as(q) + eps)
        context = torch.einsum('...nd,...ne->...nde', k, v)
        context_cumsum = last_context_cumsum + context.cumsum(dim=-3)
        out = torch.einsum('...nde,...nd,...n->...ne', context_cumsum, q, D_inv)
        last_k_cumsum = k_cumsum[:, :, -1:]
        last_context_cumsum = context_cumsum[:, :, -1:]
        outs.append(out)
    return torch.cat(outs, dim=-2)


class FastAttention(nn.Module):
    def __init__(self, dim_heads, nb_features=None, ortho_scaling=0, causal=False,
                 generalized_attention=False, kernel_fn=nn.ReLU(), no_projection=False):
        super().__init__()
        nb_features = default(nb_features, int(dim_heads * math.log(dim_heads)))
        self.dim_heads = dim_heads
        self.nb_features = nb_features
        self.ortho_scaling = ortho_scaling
        self.create_projection = partial(gaussian_orthogonal_random_matrix,
                                         nb_rows=self.nb_features, nb_columns=dim_heads,
                                         scaling=ortho_scaling)
        projection_matrix = self.create_projection()
        self.register_buffer('projection_matrix', projection_matrix)
        self.generalized_attention = generalized_attention
        self.kernel_fn = kernel_fn
        self.no_projection = no_projection
        self.causal = causal
        if causal:
            self.causal_linear_fn = partial(causal_linear_attention_noncuda, chunk_size=4)

    @torch.no_grad()
    def redraw_projection_matrix(self, device):
        projections = self.create_projection(device=device)
        self.projection_matrix.copy_(projections)
        del projections

    def forward(self, q, k, v):
        device = q.device
        if self.no_projection:
            q = q.softmax(dim=-1)
            k = torch.exp(k) if self.causal else k.softmax(dim=-2)
        elif self.generalized_attention:
            create_kernel = partial(generalized_kernel, kernel_fn=self.kernel_fn,
                                    projection_matrix=self.projection_matrix, device=device)
            q, k = map(create_kernel, (q, k))
        else:
            create_kernel = partial(softmax_kernel, projection_matrix=self.projection_matrix,
                                    device=device)
            q = create_kernel(q, is_query=True)
            k = create_kernel(k, is_query=False)
        attn_fn = linear_attention if not self.causal else self.causal_linear_fn
        out = attn_fn(q, k, v)
        return out


def init_(tensor):
    dim = tensor.shape[-1]
    std = 1 / math.sqrt(dim)
    tensor.uniform_(-std, std)
    return tensor


class LinformerSelfAttention(nn.Module):
    def __init__(self, dim, seq_len, k=256, heads=8, dim_head=None, one_kv_head=False,
                 share_kv=False, dropout=0.):
        super().__init__()
        assert (dim % heads) == 0, 'dimension must be divisible by the number of heads'
        self.seq_len = seq_len
        self.k = k
        self.heads = heads
        dim_head = default(dim_head, dim // heads)
        self.dim_head = dim_head
        self.to_q = nn.Linear(dim, dim_head * heads, bias=False)
        kv_dim = dim_head if one_kv_head else (dim_head * heads)
        self.to_k = nn.Linear(dim, kv_dim, bias=False)
        self.proj_k = nn.Parameter(init_(torch.zeros(seq_len, k)))
        self.share_kv = share_kv
        if not share_kv:
            self.to_v = nn.Linear(dim, kv_dim, bias=False)
            self.proj_v = nn.Parameter(init_(torch.zeros(seq_len, k)))
        self.dropout = nn.Dropout(dropout)
        self.to_out = nn.Linear(dim_head * heads, dim)

    def forward(self, x, context=None, **kwargs):
        b, n, d, d_h, h, k = *x.shape, self.dim_head, self.heads, self.k
        kv_len = n if context is None else context.shape[1]
        assert kv_len <= self.seq_len, \
            f'the sequence length of the key / values must be {self.seq_len} - {kv_len} given'
        queries = self.to_q(x)
        proj_seq_len = lambda args: torch.einsum('bnd,nk->bkd', *args)  # noqa: E731
        kv_input = x if context is None else context
        keys = self.to_k(kv_input)
        values = self.to_v(kv_input) if not self.share_kv else keys
        kv_projs = (self.proj_k, self.proj_v if not self.share_kv else self.proj_k)
        if kv_len < self.seq_len:
            kv_projs = map(lambda t: t[:kv_len], kv_projs)
        keys, values = map(proj_seq_len, zip((keys, values), kv_projs))
        queries = queries.reshape(b, n, h, -1).transpose(1, 2)
        merge_key_values = lambda t: t.reshape(b, k, -1, d_h).transpose(1, 2).expand(  # noqa
            -1, h, -1, -1)
        keys, values = map(merge_key_values, (keys, values))
        dots = torch.einsum('bhnd,bhkd->bhnk', queries, keys) * (d_h ** -0.5)
        attn = dots.softmax(dim=-1)
        attn = self.dropout(attn)
        out = torch.einsum('bhnk,bhkd->bhnd', attn, values)
        out = out.transpose(1, 2).reshape(b, n, -1)
        return self.to_out(out)


TOKEN_SELF_ATTN_VALUE = -5e4


def sort_key_val(t1, t2, dim=-1):
    values, indices = t1.sort(dim=dim)
    t2 = t2.expand_as(t1)
    return values, t2.gather(dim, indices)


def batched_index_select(values, indices):
    last_dim = values.shape[-1]
    return values.gather(1, indices[:, :, None].expand(-1, -1, last_dim))


def max_neg_value(tensor):
    return -torch.finfo(tensor.dtype).max


class LSHAttention(nn.Module):
    def __init__(self, dropout=0., bucket_size=4, n_hashes=2, causal=False,
                 attend_across_buckets=True, rehash_each_round=True, random_rotations_per_head=False):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.dropout_for_hash = nn.Dropout(dropout)
        self.causal = causal
        self.bucket_size = bucket_size
        self.n_hashes = n_hashes
        self._attend_across_buckets = attend_across_buckets
        self._rehash_each_round = rehash_each_round
        self._random_rotations_per_head = random_rotations_per_head

    def hash_vectors(self, n_buckets, vecs):
        batch_size = vecs.shape[0]
        device = vecs.device
        assert n_buckets % 2 == 0
        rot_size = n_buckets
        rotations_shape = (
            batch_size if self._random_rotations_per_head else 1,
            vecs.shape[-1],
            self.n_hashes if self._rehash_each_round else 1,
            rot_size // 2)
        random_rotations = torch.randn(rotations_shape, dtype=vecs.dtype,
                                       device=device).expand(batch_size, -1, -1, -1)
        dropped_vecs = self.dropout_for_hash(vecs)
        rotated_vecs = torch.einsum('btf,bfhi->bhti', dropped_vecs, random_rotations)
        rotated_vecs = torch.cat([rotated_vecs, -rotated_vecs], dim=-1)
        buckets = torch.argmax(rotated_vecs, dim=-1)
        offsets = torch.arange(self.n_hashes, device=device)
        offsets = torch.reshape(offsets * n_buckets, (1, -1, 1))
        buckets = torch.reshape(buckets + offsets, (batch_size, -1,))
        return buckets

    def forward(self, qk, v, query_len=None):
        batch_size, seqlen, dim, device = *qk.shape, qk.device
        query_len = default(query_len, seqlen)
        assert seqlen % (self.bucket_size * 2) == 0, \
            f'Sequence length ({seqlen}) needs to be divisible by target bucket size x 2 - ' \
            f'{self.bucket_size * 2}'
        n_buckets = seqlen // self.bucket_size
        buckets = self.hash_vectors(n_buckets, qk)
        assert int(buckets.shape[1]) == self.n_hashes * seqlen
        total_hashes = self.n_hashes
        ticker = torch.arange(total_hashes * seqlen, device=device).unsqueeze(0).expand_as(buckets)
        buckets_and_t = seqlen * buckets + (ticker % seqlen)
        buckets_and_t = buckets_and_t.detach()
        sbuckets_and_t, sticker = sort_key_val(buckets_and_t, ticker, dim=-1)
        _, undo_sort = sticker.sort(dim=-1)
        del ticker
        sbuckets_and_t = sbuckets_and_t.detach()
        sticker = sticker.detach()
        undo_sort = undo_sort.detach()
        st = (sticker % seqlen)
        sqk = batched_index_select(qk, st)
        sv = batched_index_select(v, st)
        chunk_size = total_hashes * n_buckets
        bq_t = bkv_t = torch.reshape(st, (batch_size, chunk_size, -1))
        bqk = torch.reshape(sqk, (batch_size, chunk_size, -1, dim))
        bv = torch.reshape(sv, (batch_size, chunk_size, -1, dim))
        bq = bqk
        bk = F.normalize(bqk, p=2, dim=-1).type_as(bq)

        def look_one_back(x):
            x_extra = torch.cat([x[:, -1:, ...], x[:, :-1, ...]], dim=1)
            return torch.cat([x, x_extra], dim=2)

        bk = look_one_back(bk)
        bv = look_one_back(bv)
        bkv_t = look_one_back(bkv_t)
        dots = torch.einsum('bhie,bhje->bhij', bq, bk) * (dim ** -0.5)
        masked_value = max_neg_value(dots)
        if self.causal:
            mask = bq_t[:, :, :, None] < bkv_t[:, :, None, :]
            if seqlen > query_len:
                mask = mask & (bkv_t[:, :, None, :] < query_len)
            dots.masked_fill_(mask, masked_value)
            del mask
        self_mask = bq_t[:, :, :, None] == bkv_t[:, :, None, :]
        dots.masked_fill_(self_mask, TOKEN_SELF_ATTN_VALUE)
        del self_mask
        if not self._attend_across_buckets:
            bq_buckets = bkv_buckets = torch.reshape(sbuckets_and_t // seqlen,
                                                     (batch_size, chunk_size, -1))
            bkv_buckets = look_one_back(bkv_buckets)
            bucket_mask = bq_buckets[:, :, :, None] != bkv_buckets[:, :, None, :]
            dots.masked_fill_(bucket_mask, masked_value)
            del bucket_mask
        dots_logsumexp = torch.logsumexp(dots, dim=-1, keepdim=True)
        dots = torch.exp(dots - dots_logsumexp).type_as(dots)
        dropped_dots = self.dropout(dots)
        bo = torch.einsum('buij,buje->buie', dropped_dots, bv)
        so = torch.reshape(bo, (batch_size, -1, dim))
        slogits = torch.reshape(dots_logsumexp, (batch_size, -1,))
        o = batched_index_select(so, undo_sort)
        logits = slogits.gather(1, undo_sort)
        o = torch.reshape(o, (batch_size, total_hashes, seqlen, dim))
        logits = torch.reshape(logits, (batch_size, total_hashes, seqlen, 1))
        if query_len != seqlen:
            query_slice = (slice(None), slice(None), slice(0, query_len))
            o, logits = o[query_slice], logits[query_slice]
        probs = torch.exp(logits - torch.logsumexp(logits, dim=1, keepdim=True))
        out = torch.sum(o * probs, dim=1)
        return out, buckets


class PreNorm(nn.Module):
    def __init__(self, dim, fn, context_dim=None):
        super().__init__()
        self.fn = fn
        self.norm = nn.LayerNorm(dim)
        self.norm_context = nn.LayerNorm(context_dim) if exists(context_dim) else None

    def forward(self, x, **kwargs):
        x = self.norm(x)
        if exists(self.norm_context):
            context = kwargs['context']
            normed_context = self.norm_context(context)
            kwargs.update(context=normed_context)
        return self.fn(x, **kwargs)


class GEGLU(nn.Module):
    def forward(self, x):
        x, gates = x.chunk(2, dim=-1)
        return x * F.gelu(gates)


class FeedForward(nn.Module):
    def __init__(self, dim, mult=4, dropout=0.):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim * mult * 2), GEGLU(),
                                 nn.Linear(dim * mult, dim), nn.Dropout(dropout))

    def forward(self, x):
        return self.net(x)


class Attention(nn.Module):
    def __init__(self, query_dim, context_dim=None, heads=8, dim_head=64, dropout=0.):
        super().__init__()
        inner_dim = dim_head * heads
        context_dim = default(context_dim, query_dim)
        self.scale = dim_head ** -0.5
        self.heads = heads
        self.to_q = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(context_dim, inner_dim * 2, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.to_out = nn.Linear(inner_dim, query_dim)

    def forward(self, x, context=None, mask=None):
        h = self.heads
        q = self.to_q(x)
        context = default(context, x)
        k, v = self.to_kv(context).chunk(2, dim=-1)
        # rearrange(t, 'b n (h d) -> (b h) n d', h=h)
        q, k, v = map(lambda t: t.reshape(t.shape[0], t.shape[1], h, -1).permute(0, 2, 1, 3)
                      .reshape(t.shape[0] * h, t.shape[1], -1), (q, k, v))
        sim = torch.einsum('b i d, b j d -> b i j', q, k) * self.scale
        if exists(mask):
            mask = mask.reshape(mask.shape[0], -1)
            max_neg_value = -torch.finfo(sim.dtype).max
            mask = mask[:, None, None, :].expand(-1, h, 1, -1).reshape(-1, 1, mask.shape[-1])
            sim.masked_fill_(~mask, max_neg_value)
        attn = sim.softmax(dim=-1)
        attn = self.dropout(attn)
        out = torch.einsum('b i j, b j d -> b i d', attn, v)
        out = out.reshape(-1, h, out.shape[1], out.shape[2]).permute(0, 2, 1, 3)
        out = out.reshape(out.shape[0], out.shape[1], -1)
        return self.to_out(out)


def fourier_encode(x, max_freq, num_bands=4):
    x = x.unsqueeze(-1)
    device, dtype, orig_x = x.device, x.dtype, x
    scales = torch.linspace(1., max_freq / 2, num_bands, device=device, dtype=dtype)
    scales = scales[(*((None,) * (len(x.shape) - 1)), Ellipsis)]
    x = x * scales * pi
    x = torch.cat([x.sin(), x.cos()], dim=-1)
    x = torch.cat((x, orig_x), dim=-1)
    return x


class Perceiver(nn.Module):
    def __init__(self, *, num_freq_bands=3, depth=1, max_freq=6., input_channels=1,
                 input_axis=2, num_latents=6, latent_dim=16, cross_heads=1, latent_heads=2,
                 cross_dim_head=8, latent_dim_head=8, num_classes=3):
        super().__init__()
        self.input_axis = input_axis
        self.max_freq = max_freq
        self.num_freq_bands = num_freq_bands
        fourier_channels = (input_axis * ((num_freq_bands * 2) + 1))
        input_dim = fourier_channels + input_channels
        self.latents = nn.Parameter(torch.randn(num_latents, latent_dim))
        self.layers = nn.ModuleList([])
        for i in range(depth):
            self.layers.append(nn.ModuleList([
                PreNorm(latent_dim, Attention(latent_dim, input_dim, heads=cross_heads,
                                              dim_head=cross_dim_head), context_dim=input_dim),
                PreNorm(latent_dim, FeedForward(latent_dim, mult=2)),
                nn.ModuleList([nn.ModuleList([
                    PreNorm(latent_dim, Attention(latent_dim, heads=latent_heads,
                                                  dim_head=latent_dim_head)),
                    PreNorm(latent_dim, FeedForward(latent_dim, mult=2))])]),
            ]))
        self.to_logits = nn.Sequential(nn.LayerNorm(latent_dim), nn.Linear(latent_dim, num_classes))

    def forward(self, data, mask=None):
        b, *axis, _, device, dtype = *data.shape, data.device, data.dtype
        axis_pos = list(map(lambda size: torch.linspace(-1., 1., steps=size, device=device,
                                                        dtype=dtype), axis))
        pos = torch.stack(torch.meshgrid(*axis_pos, indexing='ij'), dim=-1)
        enc_pos = fourier_encode(pos, self.max_freq, self.num_freq_bands)
        enc_pos = enc_pos.reshape(*enc_pos.shape[:-2], -1)
        enc_pos = enc_pos.expand(b, *enc_pos.shape)
        data = torch.cat((data, enc_pos), dim=-1)
        data = data.reshape(b, -1, data.shape[-1])
        x = self.latents.expand(b, *self.latents.shape)
        for cross_attn, cross_ff, self_attns in self.layers:
            x = cross_attn(x, context=data, mask=mask) + x
            x = cross_ff(x) + x
            for self_attn, self_ff in self_attns:
                x = self_attn(x) + x
                x = self_ff(x) + x
        x = x.mean(dim=-2)
        return self.to_logits(x)


def exact_attention(q, k, v, causal=False):
    dots = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
    if causal:
        n = q.shape[-2]
        dots = dots.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float('-inf'))
    return dots.softmax(-1) @ v


def main():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 2, 12, 8) * 0.5 for _ in range(3))
    q.requires_grad_()
    exact = exact_attention(q, k, v)
    for kw in ({}, {"nb_features": 64}, {"generalized_attention": True},
               {"no_projection": True}, {"ortho_scaling": 1}):
        attn = FastAttention(8, **kw)
        out = attn(q, k, v)
        print(kw, tuple(attn.projection_matrix.shape), out.sum().item(),
              (out - exact).abs().mean().item())
    attn = FastAttention(8, nb_features=16, causal=True)
    out = attn(q, k, v)
    print("causal", out.sum().item(), (out - exact_attention(q, k, v, True)).abs().mean().item())
    out.pow(2).sum().backward()
    print("q grad", q.grad.abs().sum().item())
    before = attn.projection_matrix.clone()
    attn.redraw_projection_matrix(None)
    print("redraw", (attn.projection_matrix - before).abs().sum().item() > 0,
          torch.linalg.matrix_norm(attn.projection_matrix[:8] @ attn.projection_matrix[:8].t()
                                   - torch.diag(attn.projection_matrix[:8].norm(dim=1) ** 2)).item() < 1e-3)
    try:
        gaussian_orthogonal_random_matrix(4, 4, scaling=2)
    except ValueError as e:
        print(type(e).__name__, e)

    lin = LinformerSelfAttention(dim=16, seq_len=10, k=4, heads=2, one_kv_head=True)
    lin_shared = LinformerSelfAttention(dim=16, seq_len=10, k=4, heads=2, share_kv=True)
    x = torch.randn(3, 10, 16, requires_grad=True)
    y = lin(x) + lin_shared(x)
    y.sum().backward()
    print("linformer", tuple(y.shape), y.abs().sum().item(), lin.proj_k.grad.abs().sum().item(),
          x.grad.abs().sum().item())
    print("linformer short", lin(torch.randn(2, 7, 16)).shape)
    try:
        lin(torch.randn(1, 11, 16))
    except AssertionError as e:
        print(type(e).__name__, e)

    lsh = LSHAttention(bucket_size=4, n_hashes=2)
    qk = torch.randn(2, 16, 8, requires_grad=True)
    vv = torch.randn(2, 16, 8)
    out, buckets = lsh(qk, vv)
    print("buckets", buckets[0, :16].tolist(), buckets.max().item())
    out.sum().backward()
    print("lsh", tuple(out.shape), out.sum().item(), qk.grad.abs().sum().item())
    lsh_c = LSHAttention(bucket_size=2, n_hashes=1, causal=True, attend_across_buckets=False)
    out_c, _ = lsh_c(qk.detach(), vv, query_len=6)
    print("lsh causal", tuple(out_c.shape), out_c[0, 0].tolist()[:3], out_c.sum().item())

    model = Perceiver()
    opt = optim.Adam(model.parameters(), lr=3e-3)
    imgs = torch.randn(12, 5, 5, 1)
    labels = torch.arange(12) % 3
    imgs[:, :, :, 0] += labels.view(12, 1, 1).float()
    mask = torch.ones(12, 5, 5, dtype=torch.bool)
    mask[:, 4] = False
    for step in range(5):
        logits = model(imgs, mask=mask)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("perceiver step %d loss %.5f" % (step, loss.item()))
    print("latents grad", model.latents.grad.abs().sum().item())
    print("fourier", fourier_encode(torch.tensor([[0.5]]), 6., 3).tolist())


if __name__ == "__main__":
    main()
