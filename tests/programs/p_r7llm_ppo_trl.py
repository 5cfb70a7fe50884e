"""RLHF-style PPO for a language model, shrunk from huggingface/trl (v0.7-era): core.py
(logprobs_from_logits, whiten, masked_mean, masked_var with Bessel correction, masked_whiten,
clip_by_value, entropy_from_logits, AdaptiveKLController / FixedKLController),
models/modeling_value_head.py (ValueHead on the last hidden state, a causal LM with a value
head), and trainer/ppo_trainer.py (batched_forward_pass masking the query tokens,
compute_rewards with the kl / abs / mse / full KL penalties against a frozen reference model and
the score added at the last response token, compute_advantages (GAE, masked_whiten), and loss:
clipped policy-gradient loss, clipped value loss, clipfracs, approxkl / policykl, entropy), run
for a few PPO epochs over shuffled minibatches. Queries are random tokens, responses are sampled
with torch.multinomial, and the "reward model" scores how often one token occurs."""
import copy
import importlib
import os

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")

VOCAB = 24


def logprobs_from_logits(logits, labels, gather=True):
    logp = F.log_softmax(logits, dim=2)
    if not gather:
        return logp
    logpy = torch.gather(logp, 2, labels.unsqueeze(2)).squeeze(-1)
    return logpy


def whiten(values, shift_mean=True):
    mean, var = torch.mean(values), torch.var(values)
    whitened = (values - mean) * torch.rsqrt(var + 1e-8)
    if not shift_mean:
        whitened += mean
    return whitened


def masked_mean(values, mask, axis=None):
    if axis is not None:
        return (values * mask).sum(axis=axis) / mask.sum(axis=axis)
    else:
        return (values * mask).sum() / mask.sum()


def masked_var(values, mask, unbiased=True):
    mean = masked_mean(values, mask)
    centered_values = values - mean
    variance = masked_mean(centered_values**2, mask)
    if unbiased:
        mask_sum = mask.sum()
        if mask_sum == 0:
            raise ValueError("The sum of the mask is zero, which can happen when "
                             "`mini_batch_size=1`;try increase the `mini_batch_size` or "
                             "`gradient_accumulation_steps`")
        bessel_correction = mask_sum / (mask_sum - 1)
        variance = variance * bessel_correction
    return variance


def masked_whiten(values, mask, shift_mean=True):
    mean, var = masked_mean(values, mask), masked_var(values, mask)
    whitened = (values - mean) * torch.rsqrt(var + 1e-8)
    if not shift_mean:
        whitened += mean
    return whitened


def clip_by_value(x, tensor_min, tensor_max):
    clipped = torch.max(torch.min(x, tensor_max), tensor_min)
    return clipped


def entropy_from_logits(logits):
    pd = torch.nn.functional.softmax(logits, dim=-1)
    entropy = torch.logsumexp(logits, axis=-1) - torch.sum(pd * logits, axis=-1)
    return entropy


class AdaptiveKLController:
    def __init__(self, init_kl_coef, target, horizon):
        self.value = init_kl_coef
        self.target = target
        self.horizon = horizon

    def update(self, current, n_steps):
        target = self.target
        proportional_error = np.clip(current / target - 1, -0.2, 0.2)
        mult = 1 + proportional_error * n_steps / self.horizon
        self.value *= mult


class FixedKLController:
    def __init__(self, kl_coef):
        self.value = kl_coef

    def update(self, current, n_steps):
        pass


class ValueHead(nn.Module):
    def __init__(self, hidden_size, summary_dropout_prob=0.1):
        super().__init__()
        self.dropout = nn.Dropout(summary_dropout_prob) if summary_dropout_prob else nn.Identity()
        self.summary = nn.Linear(hidden_size, 1)
        self.flatten = nn.Flatten()

    def forward(self, hidden_states):
        output = self.dropout(hidden_states)
        if output.dtype != self.summary.weight.dtype:
            output = output.to(self.summary.weight.dtype)
        output = self.summary(output)
        return output


class CausalLMWithValueHead(nn.Module):
    def __init__(self, d=32, block=16):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, d)
        self.wpe = nn.Embedding(block, d)
        layer = nn.TransformerEncoderLayer(d, 2, 64, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.h = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, VOCAB, bias=False)
        self.v_head = ValueHead(d, summary_dropout_prob=0.0)
        self.v_head.summary.weight.data.normal_(mean=0.0, std=0.2)
        self.v_head.summary.bias.data.zero_()

    def forward(self, input_ids):
        T = input_ids.shape[1]
        x = self.wte(input_ids) + self.wpe(torch.arange(T))
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        last_hidden_state = self.ln_f(self.h(x, mask=mask, is_causal=True))
        lm_logits = self.lm_head(last_hidden_state)
        value = self.v_head(last_hidden_state).squeeze(-1)
        return lm_logits, None, value


class PPOConfig:
    gamma, lam, cliprange, cliprange_value, vf_coef = 1.0, 0.95, 0.2, 0.2, 0.1
    ppo_epochs, mini_batch_size, whiten_rewards = 2, 4, False
    kl_penalty = "kl"


class PPOTrainer:
    def __init__(self, config, model, ref_model):
        self.config, self.model, self.ref_model = config, model, ref_model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
        self.kl_ctl = AdaptiveKLController(0.2, 6.0, 10000)

    def batched_forward_pass(self, model, queries, responses):
        input_ids = torch.cat([torch.stack(queries), torch.stack(responses)], dim=1)
        attention_mask = torch.ones_like(input_ids)
        logits, _, values = model(input_ids)
        logprobs = logprobs_from_logits(logits[:, :-1, :], input_ids[:, 1:])
        masks = torch.zeros_like(attention_mask)
        masks[:, :-1] = attention_mask[:, 1:]
        for j in range(len(queries)):
            start = len(queries[j]) - 1  # logprobs starts from the second query token
            end = start + len(responses[j])
            masks[j, :start] = 0
            masks[j, end:] = 0
        return logprobs, logits[:, :-1], values[:, :-1], masks[:, :-1]

    def _kl_penalty(self, logprob, ref_logprob):
        if self.config.kl_penalty == "kl":
            return logprob - ref_logprob
        if self.config.kl_penalty == "abs":
            return (logprob - ref_logprob).abs()
        if self.config.kl_penalty == "mse":
            return 0.5 * (logprob - ref_logprob).square()
        if self.config.kl_penalty == "full":
            # Flip is required due to this issue? :https://github.com/pytorch/pytorch/issues/57459
            return F.kl_div(ref_logprob, logprob, log_target=True, reduction="none").sum(-1)
        raise NotImplementedError

    def compute_rewards(self, scores, logprobs, ref_logprobs, masks):
        rewards, non_score_rewards, kls = [], [], []
        for score, logprob, ref_logprob, mask in zip(scores, logprobs, ref_logprobs, masks):
            kl = self._kl_penalty(logprob, ref_logprob)
            kls.append(kl)
            non_score_reward = -self.kl_ctl.value * kl
            non_score_rewards.append(non_score_reward)
            reward = non_score_reward.clone()
            last_non_masked_index = mask.nonzero()[-1]
            reward[last_non_masked_index] += score
            rewards.append(reward)
        return torch.stack(rewards), torch.stack(non_score_rewards), torch.stack(kls)

    def compute_advantages(self, values, rewards, mask):
        lastgaelam = 0
        advantages_reversed = []
        gen_len = rewards.shape[-1]
        values = values * mask
        rewards = rewards * mask
        if self.config.whiten_rewards:
            rewards = masked_whiten(rewards, mask, shift_mean=False)
        for t in reversed(range(gen_len)):
            nextvalues = values[:, t + 1] if t < gen_len - 1 else 0.0
            delta = rewards[:, t] + self.config.gamma * nextvalues - values[:, t]
            lastgaelam = delta + self.config.gamma * self.config.lam * lastgaelam
            advantages_reversed.append(lastgaelam)
        advantages = torch.stack(advantages_reversed[::-1]).transpose(0, 1)
        returns = advantages + values
        advantages = masked_whiten(advantages, mask)
        advantages = advantages.detach()
        return values, advantages, returns

    def loss(self, old_logprobs, values, logits, vpreds, logprobs, mask, advantages, returns):
        vpredclipped = clip_by_value(vpreds, values - self.config.cliprange_value,
                                     values + self.config.cliprange_value)
        vf_losses1 = (vpreds - returns) ** 2
        vf_losses2 = (vpredclipped - returns) ** 2
        vf_loss = 0.5 * masked_mean(torch.max(vf_losses1, vf_losses2), mask)
        vf_clipfrac = masked_mean(torch.gt(vf_losses2, vf_losses1).float(), mask)
        ratio = torch.exp(logprobs - old_logprobs)
        pg_losses = -advantages * ratio
        pg_losses2 = -advantages * torch.clamp(ratio, 1.0 - self.config.cliprange,
                                               1.0 + self.config.cliprange)
        pg_loss = masked_mean(torch.max(pg_losses, pg_losses2), mask)
        pg_clipfrac = masked_mean(torch.gt(pg_losses2, pg_losses).float(), mask)
        loss = pg_loss + self.config.vf_coef * vf_loss
        entropy = masked_mean(entropy_from_logits(logits), mask)
        approxkl = 0.5 * masked_mean((logprobs - old_logprobs) ** 2, mask)
        policykl = masked_mean(old_logprobs - logprobs, mask)
        stats = dict(pg=pg_loss.item(), vf=vf_loss.item(), total=loss.item(),
                     entropy=entropy.item(), approxkl=approxkl.item(), policykl=policykl.item(),
                     pg_clipfrac=pg_clipfrac.item(), vf_clipfrac=vf_clipfrac.item())
        return pg_loss, self.config.vf_coef * vf_loss, stats

    def step(self, queries, responses, scores):
        bs = len(queries)
        scores = torch.tensor(scores)
        with torch.no_grad():
            all_logprobs, logits_or_none, values, masks = self.batched_forward_pass(
                self.model, queries, responses)
            ref_logprobs, _, _, _ = self.batched_forward_pass(self.ref_model, queries, responses)
            rewards, non_score_reward, kls = self.compute_rewards(scores, all_logprobs,
                                                                  ref_logprobs, masks)
            values, advantages, returns = self.compute_advantages(values, rewards, masks)
        all_stats = []
        for _ in range(self.config.ppo_epochs):
            b_inds = torch.randperm(bs).tolist()
            for start in range(0, bs, self.config.mini_batch_size):
                mb = b_inds[start:start + self.config.mini_batch_size]
                logprobs, logits, vpreds, _ = self.batched_forward_pass(
                    self.model, [queries[i] for i in mb], [responses[i] for i in mb])
                loss_p, loss_v, train_stats = self.loss(all_logprobs[mb], values[mb], logits,
                                                        vpreds, logprobs, masks[mb],
                                                        advantages[mb], returns[mb])
                loss = loss_p + loss_v
                self.optimizer.zero_grad()
                loss.backward()
                gn = nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                train_stats["grad_norm"] = gn.item()
                self.optimizer.step()
                all_stats.append(train_stats)
        mean_kl = masked_mean(kls, masks, axis=1).mean().item()
        self.kl_ctl.update(mean_kl, bs)
        stats = {k: round(float(np.mean([s[k] for s in all_stats])), 5) for k in all_stats[0]}
        stats["objective/kl"] = round(mean_kl, 5)
        stats["objective/kl_coef"] = round(self.kl_ctl.value, 6)
        stats["ppo/returns/mean"] = round(masked_mean(returns, masks).item(), 5)
        stats["ppo/returns/var"] = round(masked_var(returns, masks).item(), 5)
        stats["non_score_reward"] = round(masked_mean(non_score_reward, masks).item(), 6)
        return stats


torch.manual_seed(0)
x = torch.randn(3, 5)
m = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [0, 1, 1, 1, 1]]).float()
print("masked_mean", round(masked_mean(x, m).item(), 5), masked_mean(x, m, axis=1))
print("masked_var", round(masked_var(x, m).item(), 5), round(masked_var(x, m, False).item(), 5))
print("masked_whiten", masked_whiten(x, m)[m.bool()].std().item() > 0.99,
      masked_whiten(x, m, shift_mean=False).sum().item() != 0)
print("whiten", whiten(x).mean().abs().item() < 1e-6, round(whiten(x).var().item(), 4))
print("clip_by_value", clip_by_value(x[0], x[1] - 0.1, x[1] + 0.1))
print("entropy", entropy_from_logits(x), torch.distributions.Categorical(logits=x).entropy())
try:
    masked_var(x, torch.zeros(3, 5))
except ValueError as e:
    print("ValueError", str(e)[:40])

model = CausalLMWithValueHead()
ref_model = copy.deepcopy(model).eval()
trainer = PPOTrainer(PPOConfig(), model, ref_model)
for kl_penalty in ("kl", "abs", "mse", "full"):
    trainer.config.kl_penalty = kl_penalty
    lp = logprobs_from_logits(torch.randn(2, 3, VOCAB), torch.tensor([[1, 2, 3], [4, 5, 6]]))
    rlp = logprobs_from_logits(torch.randn(2, 3, VOCAB), None, gather=False)
    if kl_penalty == "full":
        lp = logprobs_from_logits(torch.randn(2, 3, VOCAB), None, gather=False)
    print("kl_penalty", kl_penalty, trainer._kl_penalty(lp, rlp if kl_penalty == "full"
                                                        else rlp[..., 0]).sum().item().__round__(4))
trainer.config.kl_penalty = "kl"

gen = torch.Generator().manual_seed(3)
for step in range(3):
    queries = [torch.randint(0, VOCAB, (4,), generator=gen) for _ in range(8)]
    responses = []
    with torch.no_grad():
        for q in queries:
            ids = q[None]
            for _ in range(5):
                logits, _, _ = model(ids)
                probs = F.softmax(logits[:, -1, :] / 1.0, dim=-1)
                ids = torch.cat([ids, torch.multinomial(probs, 1, generator=gen)], dim=1)
            responses.append(ids[0, len(q):])
    scores = [float((r == 7).sum()) - 0.5 for r in responses]
    stats = trainer.step(queries, responses, scores)
    print("step", step, "score %.3f" % np.mean(scores), stats)
print("responses", torch.stack(responses).shape, responses[0])
print("optimizer steps", trainer.optimizer.state_dict()["state"][0]["step"])
