"""The torch.func tutorials, shrunk: per-sample gradients, model ensembling, Jacobians/Hessians,
jvp/vjp and the neural tangent kernel."""
import importlib
import os

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
func = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".func")
functional_call, vmap, grad = func.functional_call, func.vmap, func.grad
stack_module_state = func.stack_module_state
jacrev, jacfwd, hessian, jvp, vjp = func.jacrev, func.jacfwd, func.hessian, func.jvp, func.vjp

torch.manual_seed(0)

# --- Per-sample-gradients
class SimpleCNN(nn.Module):
    def __init__(self):
        super(SimpleCNN, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


device = 'cpu'
num_models = 4
batch_size = 6
data = torch.randn(batch_size, 1, 8, 8, device=device)
targets = torch.randint(10, (6,), device=device)
model = SimpleCNN().to(device=device)
predictions = model(data)
loss = loss_fn(predictions, targets)


def compute_grad(sample, target):
    sample = sample.unsqueeze(0)
    target = target.unsqueeze(0)
    prediction = model(sample)
    loss = loss_fn(prediction, target)
    return torch.autograd.grad(loss, list(model.parameters()))


def compute_sample_grads(data, targets):
    sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
    sample_grads = zip(*sample_grads)
    sample_grads = [torch.stack(shards) for shards in sample_grads]
    return sample_grads


per_sample_grads = compute_sample_grads(data, targets)
print(per_sample_grads[1].shape)

params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    loss = loss_fn(predictions, targets)
    return loss


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
    assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
print({k: tuple(v.shape) for k, v in ft_per_sample_grads.items()})
print(ft_per_sample_grads["fc2.bias"][:2])

# --- Model ensembling
class SimpleMLP(nn.Module):
    def __init__(self):
        super(SimpleMLP, self).__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)
        self.fc3 = nn.Linear(16, 10)

    def forward(self, x):
        x = x.flatten(1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        x = F.relu(x)
        x = self.fc3(x)
        return x


data = torch.randn(num_models, 3, 1, 4, 4, device=device)
minibatches = data[:num_models]
models = [SimpleMLP().to(device) for _ in range(num_models)]
minibatch = minibatches[0]
predictions1 = [model(minibatch) for model in models]
predictions2 = [model(minibatch) for model in models]
params, buffers = stack_module_state(models)
print({k: tuple(v.shape) for k, v in params.items()}, buffers)

import copy  # noqa: E402
base_model = copy.deepcopy(models[0])
# (the tutorial moves base_model to 'meta'; ember has no meta device: see the report)


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


print([p.size(0) for p in params.values()])
predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
p1 = torch.stack([model(mb) for model, mb in zip(models, minibatches)])
assert torch.allclose(predictions1_vmap, p1, atol=1e-3, rtol=1e-5)
predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
print(predictions1_vmap.shape, predictions2_vmap.shape, predictions2_vmap[0, :3])

# --- Jacobians, Hessians, hvp, vmap
def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


D = 4
weight = torch.randn(D, D)
bias = torch.randn(D)
x = torch.randn(D)
jacobian = jacrev(predict, argnums=2)(weight, bias, x)
print(jacobian.shape, jacobian[0])
ft_jacobian, = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(
    weight, bias, torch.randn(3, D)).unsqueeze(0)
print(ft_jacobian.shape)
jacfwd_j = jacfwd(predict, argnums=2)(weight, bias, x)
assert torch.allclose(jacobian, jacfwd_j, atol=1e-6)
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
print(ft_jac_weight.shape, ft_jac_bias.shape, ft_jac_bias[1])
hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
print(hess_api.shape, hess_api[0, 0], torch.allclose(hess_api, hess_revrev, atol=1e-6),
      torch.allclose(hess_fwdfwd, hess_revrev, atol=1e-6))


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = torch.randn(5)
tangent = torch.randn(5)
print("hvp", hvp(f, (x,), (tangent,)))
out, vjp_fn = vjp(torch.sin, x)
print("vjp", out, vjp_fn(torch.ones(5)))
print("jvp", jvp(torch.cos, (x,), (torch.ones(5),)))
print("grad_and_value", func.grad_and_value(f)(x))

# --- Neural Tangent Kernels
class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, (3, 3))
        self.conv2 = nn.Conv2d(4, 4, (3, 3))
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        x = self.conv1(x)
        x = x.relu()
        x = self.conv2(x)
        x = x.relu()
        x = F.adaptive_avg_pool2d(x, (1, 1))
        x = x.view(x.size(0), -1)
        x = self.fc(x)
        return x


x_train = torch.randn(4, 3, 6, 6, device=device)
x_test = torch.randn(3, 3, 6, 6, device=device)
net = CNN().to(device)
params = {k: v.detach() for k, v in net.named_parameters()}


def fnet_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2):
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = jac1.values()
    jac1 = [j.flatten(2) for j in jac1]
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = jac2.values()
    jac2 = [j.flatten(2) for j in jac2]
    result = torch.stack([torch.einsum('Naf,Mbf->NMab', j1, j2) for j1, j2 in zip(jac1, jac2)])
    result = result.sum(0)
    return result


result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test)
print(result.shape, result[0, 0])


def empirical_ntk_ntk_vps(func, params, x1, x2, compute='full'):
    def get_ntk(x1, x2):
        def func_x1(params):
            return func(params, x1)

        def func_x2(params):
            return func(params, x2)

        output, vjp_fn = vjp(func_x1, params)

        def get_ntk_slice(vec):
            vjps = vjp_fn(vec)
            _, jvps = jvp(func_x2, (params,), vjps)
            return jvps

        basis = torch.eye(output.numel(), dtype=output.dtype, device=output.device).view(
            output.numel(), -1)
        return vmap(get_ntk_slice)(basis)

    result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
    if compute == 'full':
        return result
    if compute == 'trace':
        return torch.einsum('NMKK->NM', result)
    if compute == 'diagonal':
        return torch.einsum('NMKK->NMK', result)


result_from_ntk_vps = empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test)
result_from_jacobian_contraction = empirical_ntk_jacobian_contraction(fnet_single, params,
                                                                      x_train, x_test)
assert torch.allclose(result_from_ntk_vps, result_from_jacobian_contraction, atol=1e-5)
print(result_from_ntk_vps.shape,
      empirical_ntk_ntk_vps(fnet_single, params, x_train[:2], x_test[:2], 'trace'))
print("RESULT:", f"{result.sum().item():.4f}")
