"""Continuous-action PPO with a Beta policy (Chou et al. 2017; the Beta-distribution actor of
e.g. xtma/pytorch_car_caring and Lizhi-sjtu/DRL-code-pytorch's PPO-continuous) next to the
Gaussian actor with state-independent log_std: Independent(Beta)/Independent(Normal) action
distributions, log_prob/entropy per action vector, GAE, clipped surrogate with entropy bonus,
value clipping, gradient-norm clipping and minibatch epochs, on a toy 1-step continuous bandit."""
# compare: rtol=5e-4 atol=1e-5
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
D = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".distributions")

torch.manual_seed(0)
S_DIM, A_DIM, MAX_ACTION = 3, 2, 2.0


class Actor_Beta(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(S_DIM, 32)
        self.fc2 = nn.Linear(32, 32)
        self.alpha_layer = nn.Linear(32, A_DIM)
        self.beta_layer = nn.Linear(32, A_DIM)
        self.activate_func = nn.Tanh()

    def forward(self, s):
        s = self.activate_func(self.fc1(s))
        s = self.activate_func(self.fc2(s))
        alpha = F.softplus(self.alpha_layer(s)) + 1.0
        beta = F.softplus(self.beta_layer(s)) + 1.0
        return alpha, beta

    def get_dist(self, s):
        alpha, beta = self.forward(s)
        return D.Independent(D.Beta(alpha, beta), 1)

    def mean(self, s):
        alpha, beta = self.forward(s)
        return alpha / (alpha + beta)


class Actor_Gaussian(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(S_DIM, 32)
        self.mean_layer = nn.Linear(32, A_DIM)
        self.log_std = nn.Parameter(torch.zeros(1, A_DIM))

    def forward(self, s):
        return MAX_ACTION * torch.tanh(self.mean_layer(torch.tanh(self.fc1(s))))

    def get_dist(self, s):
        mean = self.forward(s)
        log_std = self.log_std.expand_as(mean)
        return D.Normal(mean, torch.exp(log_std))


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(S_DIM, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, s):
        return self.net(s)


def env_step(s, a):
    target = torch.stack([s[:, 0].clamp(-1, 1), -s[:, 1].clamp(-1, 1)], 1)
    return -((a - target) ** 2).sum(1, keepdim=True)


def run(kind):
    torch.manual_seed(1)
    actor = Actor_Beta() if kind == "beta" else Actor_Gaussian()
    critic = Critic()
    opt_a = torch.optim.Adam(actor.parameters(), lr=3e-3, eps=1e-5)
    opt_c = torch.optim.Adam(critic.parameters(), lr=3e-3, eps=1e-5)
    gamma, lamda, epsilon, entropy_coef, K_epochs, mini_batch = 0.99, 0.95, 0.2, 0.01, 3, 16
    for it in range(4):
        s = torch.randn(64, S_DIM)
        with torch.no_grad():
            dist = actor.get_dist(s)
            a = dist.sample()
            if kind == "beta":
                a = a.clamp(1e-4, 1 - 1e-4)
                a_logprob = dist.log_prob(a).unsqueeze(1)
                env_a = 2 * (a - 0.5) * MAX_ACTION
            else:
                a = torch.clamp(a, -MAX_ACTION, MAX_ACTION)
                a_logprob = dist.log_prob(a).sum(1, keepdim=True)
                env_a = a
            r = env_step(s, env_a)
            vs = critic(s)
            deltas = r - vs  # one-step episodes: no bootstrap
            adv = []
            gae = 0
            for delta in reversed(deltas.flatten().tolist()):
                gae = delta + gamma * lamda * gae * 0.0
                adv.insert(0, gae)
            adv = torch.tensor(adv, dtype=torch.float).view(-1, 1)
            v_target = adv + vs
            adv = (adv - adv.mean()) / (adv.std() + 1e-5)
        for _ in range(K_epochs):
            perm = torch.randperm(64)
            for index in perm.split(mini_batch):
                dist_now = actor.get_dist(s[index])
                if kind == "beta":
                    dist_entropy = dist_now.entropy().view(-1, 1)
                    a_logprob_now = dist_now.log_prob(a[index]).view(-1, 1)
                else:
                    dist_entropy = dist_now.entropy().sum(1, keepdim=True)
                    a_logprob_now = dist_now.log_prob(a[index]).sum(1, keepdim=True)
                ratios = torch.exp(a_logprob_now - a_logprob[index])
                surr1 = ratios * adv[index]
                surr2 = torch.clamp(ratios, 1 - epsilon, 1 + epsilon) * adv[index]
                actor_loss = -torch.min(surr1, surr2) - entropy_coef * dist_entropy
                opt_a.zero_grad()
                actor_loss.mean().backward()
                gn = torch.nn.utils.clip_grad_norm_(actor.parameters(), 0.5)
                opt_a.step()
                v_s = critic(s[index])
                critic_loss = F.mse_loss(v_target[index], v_s)
                opt_c.zero_grad()
                critic_loss.backward()
                torch.nn.utils.clip_grad_norm_(critic.parameters(), 0.5)
                opt_c.step()
        print(kind, "iter", it, "reward %.4f" % r.mean().item(), "actor %.4f" % actor_loss.mean().item(),
              "critic %.4f" % critic_loss.item(), "gradnorm %.4f" % gn.item(),
              "entropy %.4f" % dist_entropy.mean().item())
    with torch.no_grad():
        s = torch.tensor([[0.5, -0.5, 0.0], [-1.0, 1.0, 2.0]])
        d = actor.get_dist(s)
        print(kind, "dist", d.batch_shape, d.event_shape, "mean", d.mean, "stddev", d.stddev)
        if kind == "beta":
            print("  beta mode", d.base_dist.mode, "actor.mean", actor.mean(s))
            print("  conc", d.base_dist.concentration1, d.base_dist.concentration0)


run("beta")
run("gaussian")
print("RESULT: done")
