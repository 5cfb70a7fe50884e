"""Physics-informed neural network for Burgers' equation (Raissi et al.'s PINNs, as in the
PyTorch ports "PINNs-Torch"/"Burgers_Identification"): u_t + u u_x - nu u_xx = 0, derivatives by
torch.autograd.grad(create_graph=True, grad_outputs=ones_like), Adam then a few L-BFGS steps."""
# compare: rtol=1e-3 atol=1e-5
# (L-BFGS line steps divide by small curvature terms; float32 reduction order differs a little)
import importlib
import math
import os
from collections import OrderedDict

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn

torch.manual_seed(1234)
nu = 0.01 / math.pi


class DNN(torch.nn.Module):
    def __init__(self, layers):
        super(DNN, self).__init__()
        self.depth = len(layers) - 1
        self.activation = torch.nn.Tanh
        layer_list = list()
        for i in range(self.depth - 1):
            layer_list.append(('layer_%d' % i, torch.nn.Linear(layers[i], layers[i + 1])))
            layer_list.append(('activation_%d' % i, self.activation()))
        layer_list.append(('layer_%d' % (self.depth - 1),
                           torch.nn.Linear(layers[-2], layers[-1])))
        layerDict = OrderedDict(layer_list)
        self.layers = torch.nn.Sequential(layerDict)

    def forward(self, x):
        out = self.layers(x)
        return out


class PhysicsInformedNN():
    def __init__(self, X_u, u, X_f, layers, lb, ub, nu):
        self.lb = torch.tensor(lb).float()
        self.ub = torch.tensor(ub).float()
        self.x_u = torch.tensor(X_u[:, 0:1], requires_grad=True).float()
        self.t_u = torch.tensor(X_u[:, 1:2], requires_grad=True).float()
        self.x_f = torch.tensor(X_f[:, 0:1], requires_grad=True).float()
        self.t_f = torch.tensor(X_f[:, 1:2], requires_grad=True).float()
        self.u = torch.tensor(u).float()
        self.layers = layers
        self.nu = nu
        self.dnn = DNN(layers)
        self.optimizer = torch.optim.LBFGS(
            self.dnn.parameters(), lr=1.0, max_iter=4, max_eval=6, history_size=5,
            tolerance_grad=1e-5, tolerance_change=1.0 * torch.finfo(torch.float32).eps,
            line_search_fn="strong_wolfe")
        self.iter = 0

    def net_u(self, x, t):
        u = self.dnn(torch.cat([x, t], dim=1))
        return u

    def net_f(self, x, t):
        u = self.net_u(x, t)
        u_t = torch.autograd.grad(u, t, grad_outputs=torch.ones_like(u),
                                  retain_graph=True, create_graph=True)[0]
        u_x = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u),
                                  retain_graph=True, create_graph=True)[0]
        u_xx = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x),
                                   retain_graph=True, create_graph=True)[0]
        f = u_t + u * u_x - self.nu * u_xx
        return f

    def loss_func(self):
        self.optimizer.zero_grad()
        u_pred = self.net_u(self.x_u, self.t_u)
        f_pred = self.net_f(self.x_f, self.t_f)
        loss_u = torch.mean((self.u - u_pred) ** 2)
        loss_f = torch.mean(f_pred ** 2)
        loss = loss_u + loss_f
        loss.backward()
        self.iter += 1
        print('Iter %d, Loss: %.5e, Loss_u: %.5e, Loss_f: %.5e' % (
            self.iter, loss.item(), loss_u.item(), loss_f.item()))
        return loss

    def train(self):
        self.dnn.train()
        self.optimizer.step(self.loss_func)

    def predict(self, X):
        x = torch.tensor(X[:, 0:1], requires_grad=True).float()
        t = torch.tensor(X[:, 1:2], requires_grad=True).float()
        self.dnn.eval()
        u = self.net_u(x, t)
        f = self.net_f(x, t)
        u = u.detach().cpu().numpy()
        f = f.detach().cpu().numpy()
        return u, f


# synthetic boundary / collocation data in float64 (as the original's NumPy arrays)
lb = [-1.0, 0.0]
ub = [1.0, 1.0]
x0 = torch.rand(10, 1, dtype=torch.float64) * 2 - 1
X_u = torch.cat([torch.cat([x0, torch.zeros_like(x0)], 1),
                 torch.tensor([[-1.0, 0.3], [1.0, 0.6]], dtype=torch.float64)])
u_train = torch.cat([-torch.sin(math.pi * x0), torch.zeros(2, 1, dtype=torch.float64)])
X_f = torch.rand(24, 2, dtype=torch.float64) * torch.tensor([2.0, 1.0], dtype=torch.float64)
X_f[:, 0] -= 1
X_u, u_train, X_f = X_u.numpy(), u_train.numpy(), X_f.numpy()
print(X_u.shape, X_u.dtype, X_f.shape)

layers = [2, 12, 12, 1]
model = PhysicsInformedNN(X_u, u_train, X_f, layers, lb, ub, nu)
print(model.dnn)
print(list(model.dnn.state_dict().keys()))
print(model.x_u.requires_grad, model.x_u.is_leaf, model.x_u.dtype, model.u.dtype)

adam = torch.optim.Adam(model.dnn.parameters(), lr=1e-2)
for epoch in range(8):
    adam.zero_grad()
    loss_u = torch.mean((model.u - model.net_u(model.x_u, model.t_u)) ** 2)
    loss_f = torch.mean(model.net_f(model.x_f, model.t_f) ** 2)
    loss = loss_u + loss_f
    loss.backward()
    adam.step()
    print(f"Adam {epoch}: {loss.item():.6f}")

model.train()
X_star = torch.linspace(-1, 1, 5, dtype=torch.float64)
X_star = torch.stack([X_star, torch.full_like(X_star, 0.5)], 1).numpy()
u_pred, f_pred = model.predict(X_star)
print(u_pred.dtype, u_pred.shape)
print(u_pred.ravel().round(5), f_pred.ravel().round(5))
error_u = ((u_pred - 0.1) ** 2).mean() ** 0.5
print('Error u: %e' % (error_u))
print("RESULT:", model.iter)
