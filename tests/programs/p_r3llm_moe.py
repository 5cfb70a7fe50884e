"""Mixture-of-experts routing the way Hugging Face's MixtralSparseMoeBlock and the Switch
Transformer write it, shrunk: a router Linear, softmax in float, torch.topk gating with
renormalisation, one_hot expert masks permuted to (experts, top_k, tokens), torch.where to find
each expert's tokens, index_add_ to combine, the load-balancing auxiliary loss, router z-loss
(logsumexp), bincount token counts, expert capacity with cumsum, and a scatter_add_ version of
the combine step; training a few steps."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")


class MixtralBlockSparseTop2MLP(nn.Module):
    def __init__(self, hidden_dim, ffn_dim):
        super().__init__()
        self.w1 = nn.Linear(hidden_dim, ffn_dim, bias=False)
        self.w2 = nn.Linear(ffn_dim, hidden_dim, bias=False)
        self.w3 = nn.Linear(hidden_dim, ffn_dim, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, hidden_states):
        current_hidden_states = self.act_fn(self.w1(hidden_states)) * self.w3(hidden_states)
        return self.w2(current_hidden_states)


class MixtralSparseMoeBlock(nn.Module):
    def __init__(self, hidden_dim=16, ffn_dim=24, num_experts=4, top_k=2, jitter_noise=0.0):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.num_experts = num_experts
        self.top_k = top_k
        self.gate = nn.Linear(hidden_dim, num_experts, bias=False)
        self.experts = nn.ModuleList(
            [MixtralBlockSparseTop2MLP(hidden_dim, ffn_dim) for _ in range(num_experts)])
        self.jitter_noise = jitter_noise

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        if self.training and self.jitter_noise > 0:
            hidden_states *= torch.empty_like(hidden_states).uniform_(
                1.0 - self.jitter_noise, 1.0 + self.jitter_noise)
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final_hidden_states = torch.zeros(
            (batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype,
            device=hidden_states.device)
        expert_mask = torch.nn.functional.one_hot(selected_experts,
                                                  num_classes=self.num_experts).permute(2, 1, 0)
        expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hit:
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx,
                                                                                  None]
            final_hidden_states.index_add_(0, top_x,
                                           current_hidden_states.to(hidden_states.dtype))
        final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)
        return final_hidden_states, router_logits


def load_balancing_loss_func(gate_logits, num_experts, top_k=2, attention_mask=None):
    if isinstance(gate_logits, tuple):
        concatenated_gate_logits = torch.cat(list(gate_logits), dim=0)
    routing_weights = torch.nn.functional.softmax(concatenated_gate_logits, dim=-1)
    _, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
    expert_mask = torch.nn.functional.one_hot(selected_experts, num_experts)
    if attention_mask is None:
        tokens_per_expert = torch.mean(expert_mask.float(), dim=0)
        router_prob_per_expert = torch.mean(routing_weights, dim=0)
    else:
        batch_size, sequence_length = attention_mask.shape
        num_hidden_layers = concatenated_gate_logits.shape[0] // (batch_size * sequence_length)
        expert_attention_mask = (
            attention_mask[None, :, :, None, None]
            .expand((num_hidden_layers, batch_size, sequence_length, top_k, num_experts))
            .reshape(-1, top_k, num_experts))
        tokens_per_expert = torch.sum(expert_mask.float() * expert_attention_mask, dim=0) / \
            torch.sum(expert_attention_mask, dim=0)
        router_per_expert_attention_mask = (
            attention_mask[None, :, :, None]
            .expand((num_hidden_layers, batch_size, sequence_length, num_experts))
            .reshape(-1, num_experts))
        router_prob_per_expert = torch.sum(routing_weights * router_per_expert_attention_mask,
                                           dim=0) / torch.sum(router_per_expert_attention_mask,
                                                              dim=0)
    overall_loss = torch.sum(tokens_per_expert * router_prob_per_expert.unsqueeze(0))
    return overall_loss * num_experts


def router_z_loss_func(router_logits):
    num_groups, tokens_per_group, _ = router_logits.shape
    log_z = torch.logsumexp(router_logits, dim=-1)
    z_loss = log_z ** 2
    return torch.sum(z_loss) / (num_groups * tokens_per_group)


def switch_route(router_logits, expert_capacity):
    """Switch Transformer top-1 routing with a capacity limit."""
    router_probs = F.softmax(router_logits, dim=-1)
    expert_index = torch.argmax(router_probs, dim=-1)
    expert_index = F.one_hot(expert_index, num_classes=router_logits.shape[-1])
    token_priority = torch.cumsum(expert_index, dim=-2)
    expert_capacity_mask = token_priority <= expert_capacity
    expert_index = expert_index * expert_capacity_mask
    router_probs = torch.max(router_probs, dim=-1).values.unsqueeze(-1)
    return expert_index, router_probs


torch.manual_seed(0)
moe = MixtralSparseMoeBlock()
print(moe)
x = torch.randn(2, 5, 16)
out, logits = moe(x)
print(out.shape, out.grad_fn.name(), logits.shape)
print(out[0, :2, :6])

routing = F.softmax(logits, dim=1, dtype=torch.float)
w, sel = torch.topk(routing, 2, dim=-1)
print(sel.T, w.sum(-1)[:4], sel.dtype)
mask = F.one_hot(sel, num_classes=4)
print(mask.shape, mask.dtype, mask.permute(2, 1, 0)[1])
print("tokens per expert", torch.bincount(sel.flatten(), minlength=4),
      torch.bincount(sel[:, 0], weights=w[:, 0], minlength=4))
hit = torch.greater(mask.permute(2, 1, 0).sum(dim=(-1, -2)), 0).nonzero()
print(hit, hit.shape, torch.where(mask.permute(2, 1, 0)[0]))

# the same combine done densely with scatter_add_ and with a gather-free einsum
flat = x.view(-1, 16)
dense = torch.zeros_like(flat)
for e in range(4):
    tok, idx = torch.where(sel == e)
    contrib = moe.experts[e](flat[tok]) * (w / w.sum(-1, keepdim=True))[tok, idx, None]
    dense.scatter_add_(0, tok[:, None].expand(-1, 16), contrib)
print("scatter_add agrees:", torch.allclose(dense.view_as(out), out, atol=1e-6))
all_out = torch.stack([e(flat) for e in moe.experts], dim=1)
gates = torch.zeros(10, 4).scatter(1, sel, w / w.sum(-1, keepdim=True))
print("einsum agrees:", torch.allclose(torch.einsum("te,teh->th", gates, all_out).view_as(out),
                                       out, atol=1e-6))

am = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
print(f"aux {load_balancing_loss_func((logits, logits), 4).item():.6f}",
      f"masked {load_balancing_loss_func((logits,), 4, 2, am).item():.6f}")
print(f"z-loss {router_z_loss_func(logits.view(2, 5, 4)).item():.6f}")
ei, rp = switch_route(logits.view(2, 5, 4), expert_capacity=2)
print(ei[0], rp[1].squeeze(-1), ei.sum(dim=-2))

moe.jitter_noise = 0.01
opt = torch.optim.Adam(moe.parameters(), lr=1e-2)
target = torch.randn(2, 5, 16)
for step in range(8):
    out, logits = moe(x.clone())
    aux = load_balancing_loss_func((logits,), 4)
    loss = F.mse_loss(out, target) + 0.01 * aux
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.5f}", f"{aux.item():.5f}",
          torch.bincount(logits.argmax(-1), minlength=4).tolist())
print("unused expert grads:", [e.w1.weight.grad is None for e in moe.experts])
moe.eval()
out, _ = moe(x)
print("RESULT:", f"{out.abs().mean().item():.5f}")
