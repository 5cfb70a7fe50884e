"""Predictive uncertainty, shrunk: MC dropout (enable_dropout + get_monte_carlo_predictions with
NumPy entropy / mutual information, as in the common MC-dropout recipe), deep ensembles of
Gaussian MLPs on the x**3 toy with FGSM adversarial training (Lakshminarayanan et al., as in
the public pytorch ports) vs nn.GaussianNLLLoss, and gpleiss/temperature_scaling's
ModelWithTemperature (LBFGS on the temperature) with _ECELoss, on synthetic data."""

import importlib
import os
import sys

import numpy as np

torch = importlib.import_module(os.environ.get("TORCH_LIB", "torch"))
nn = torch.nn
F = importlib.import_module(os.environ.get("TORCH_LIB", "torch") + ".nn.functional")
optim = torch.optim


class Classifier(nn.Module):
    def __init__(self, n_in=6, n_classes=3, p=0.3):
        super().__init__()
        self.fc1 = nn.Linear(n_in, 32)
        self.drop1 = nn.Dropout(p)
        self.fc2 = nn.Linear(32, 32)
        self.drop2 = nn.Dropout(p)
        self.fc3 = nn.Linear(32, n_classes)

    def forward(self, x):
        x = self.drop1(F.relu(self.fc1(x)))
        x = self.drop2(F.relu(self.fc2(x)))
        return self.fc3(x)


def enable_dropout(model):
    """Function to enable the dropout layers during test-time"""
    for m in model.modules():
        if m.__class__.__name__.startswith("Dropout"):
            m.train()


def get_monte_carlo_predictions(data_loader, forward_passes, model, n_classes, n_samples):
    dropout_predictions = np.empty((0, n_samples, n_classes))
    softmax = nn.Softmax(dim=1)
    for i in range(forward_passes):
        predictions = np.empty((0, n_classes))
        model.eval()
        enable_dropout(model)
        for i, (image, label) in enumerate(data_loader):
            with torch.no_grad():
                output = model(image)
                output = softmax(output)
            predictions = np.vstack((predictions, output.cpu().numpy()))
        dropout_predictions = np.vstack((dropout_predictions, predictions[np.newaxis, :, :]))
    mean = np.mean(dropout_predictions, axis=0)
    variance = np.var(dropout_predictions, axis=0)
    epsilon = sys.float_info.min
    entropy = -np.sum(mean * np.log(mean + epsilon), axis=-1)
    mutual_info = entropy - np.mean(
        np.sum(-dropout_predictions * np.log(dropout_predictions + epsilon), axis=-1), axis=0
    )
    return mean, variance, entropy, mutual_info


class ModelWithTemperature(nn.Module):
    def __init__(self, model):
        super(ModelWithTemperature, self).__init__()
        self.model = model
        self.temperature = nn.Parameter(torch.ones(1) * 1.5)

    def forward(self, input):
        logits = self.model(input)
        return self.temperature_scale(logits)

    def temperature_scale(self, logits):
        temperature = self.temperature.unsqueeze(1).expand(logits.size(0), logits.size(1))
        return logits / temperature

    def set_temperature(self, valid_loader):
        nll_criterion = nn.CrossEntropyLoss()
        ece_criterion = _ECELoss()
        logits_list = []
        labels_list = []
        with torch.no_grad():
            for input, label in valid_loader:
                logits = self.model(input)
                logits_list.append(logits)
                labels_list.append(label)
            logits = torch.cat(logits_list)
            labels = torch.cat(labels_list)
        before_temperature_nll = nll_criterion(logits, labels).item()
        before_temperature_ece = ece_criterion(logits, labels).item()
        print(
            "Before temperature - NLL: %.3f, ECE: %.3f"
            % (before_temperature_nll, before_temperature_ece)
        )
        optimizer = optim.LBFGS([self.temperature], lr=0.01, max_iter=50)

        def eval():
            optimizer.zero_grad()
            loss = nll_criterion(self.temperature_scale(logits), labels)
            loss.backward()
            return loss

        optimizer.step(eval)
        after_temperature_nll = nll_criterion(self.temperature_scale(logits), labels).item()
        after_temperature_ece = ece_criterion(self.temperature_scale(logits), labels).item()
        print("Optimal temperature: %.3f" % self.temperature.item())
        print(
            "After temperature - NLL: %.3f, ECE: %.3f"
            % (after_temperature_nll, after_temperature_ece)
        )
        print(
            "lbfgs state",
            optimizer.state[self.temperature]["func_evals"],
            optimizer.state[self.temperature]["n_iter"],
        )
        return self


class _ECELoss(nn.Module):
    def __init__(self, n_bins=15):
        super(_ECELoss, self).__init__()
        bin_boundaries = torch.linspace(0, 1, n_bins + 1)
        self.bin_lowers = bin_boundaries[:-1]
        self.bin_uppers = bin_boundaries[1:]

    def forward(self, logits, labels):
        softmaxes = F.softmax(logits, dim=1)
        confidences, predictions = torch.max(softmaxes, 1)
        accuracies = predictions.eq(labels)
        ece = torch.zeros(1, device=logits.device)
        for bin_lower, bin_upper in zip(self.bin_lowers, self.bin_uppers):
            in_bin = confidences.gt(bin_lower.item()) * confidences.le(bin_upper.item())
            prop_in_bin = in_bin.float().mean()
            if prop_in_bin.item() > 0:
                accuracy_in_bin = accuracies[in_bin].float().mean()
                avg_confidence_in_bin = confidences[in_bin].mean()
                ece += torch.abs(avg_confidence_in_bin - accuracy_in_bin) * prop_in_bin
        return ece


class GaussianMLP(nn.Module):
    def __init__(self, inputs=1, outputs=1, hidden_layers=[50], activation="relu"):
        super(GaussianMLP, self).__init__()
        self.inputs = inputs
        self.outputs = outputs
        self.nLayers = len(hidden_layers)
        self.net_structure = [inputs, *hidden_layers, 2 * outputs]
        self.activation = activation
        for i in range(self.nLayers):
            layer = nn.Linear(self.net_structure[i], self.net_structure[i + 1])
            setattr(self, "layer_" + str(i), layer)
        self.output_layer = nn.Linear(self.net_structure[-2], self.net_structure[-1])

    def forward(self, x):
        for i in range(self.nLayers):
            layer = getattr(self, "layer_" + str(i))
            x = getattr(F, self.activation)(layer(x))
        x = self.output_layer(x)
        mean, variance = torch.split(x, self.outputs, dim=1)
        variance = F.softplus(variance) + 1e-6
        return mean, variance


def NLLloss(y, mean, var):
    return (torch.log(var) + ((y - mean).pow(2)) / var).sum()


def train_ensemble_member(net, x, y, eps, adversarial=True, epochs=40):
    optimizer = optim.Adam(net.parameters(), lr=0.05)
    for epoch in range(epochs):
        optimizer.zero_grad()
        x.requires_grad = True
        mean, var = net(x)
        loss = NLLloss(y, mean, var)
        if adversarial:
            x_grad = torch.autograd.grad(loss, x, retain_graph=True)[0]
            x_a = x + eps * torch.sign(x_grad)
            mean_a, var_a = net(x_a)
            loss = loss + NLLloss(y, mean_a, var_a)
        loss.backward()
        optimizer.step()
        x = x.detach()
    return loss.item()


# ---- MC dropout and temperature scaling on a 3-class problem
torch.manual_seed(0)
np.random.seed(0)
X = torch.randn(120, 6)
W = torch.randn(6, 3)
Y = (X @ W + 0.8 * torch.randn(120, 3)).argmax(1)
model = Classifier()
opt = optim.SGD(model.parameters(), lr=0.2, momentum=0.9, weight_decay=1e-4)
loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(X[:80], Y[:80]), batch_size=16, shuffle=True
)
for epoch in range(25):
    model.train()
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
print("clf loss", round(loss.item(), 5))
val_loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(X[80:], Y[80:]), batch_size=10
)
mean, variance, entropy, mi = get_monte_carlo_predictions(val_loader, 8, model, 3, 40)
print("mc mean", mean[:2].round(4), "var", variance.mean().round(6))
print("entropy", entropy[:5].round(4), "mi", mi[:5].round(5), model.training, model.drop1.training)
model.eval()
scaled = ModelWithTemperature(model)
scaled.set_temperature(val_loader)
print("T", scaled.temperature, scaled(X[80:83]).softmax(1))

# ---- deep ensemble regression on the x**3 toy
torch.manual_seed(1)
xs = torch.empty(20, 1).uniform_(-4, 4)
ys = xs.pow(3) + 3 * torch.randn(20, 1)
x_mean, x_std = xs.mean(), xs.std()
y_mean, y_std = ys.mean(), ys.std()
xn, yn = (xs - x_mean) / x_std, (ys - y_mean) / y_std
eps = 0.01 * (xn.max() - xn.min())
ensemble = [GaussianMLP(hidden_layers=[50]) for _ in range(3)]
for i, net in enumerate(ensemble):
    print(
        "member", i, round(train_ensemble_member(net, xn.clone(), yn, eps, adversarial=i != 2), 4)
    )
xt = torch.linspace(-6, 6, 7).unsqueeze(1)
with torch.no_grad():
    outs = [net((xt - x_mean) / x_std) for net in ensemble]
    means = torch.stack([m for m, v in outs])
    vars_ = torch.stack([v for m, v in outs])
    mixture_mean = means.mean(0)
    mixture_var = (vars_ + means.pow(2)).mean(0) - mixture_mean.pow(2)
print("mixture mean", (mixture_mean * y_std + y_mean).squeeze())
print("mixture std", (mixture_var.sqrt() * y_std).squeeze())
gnll = nn.GaussianNLLLoss(reduction="sum")
m, v = ensemble[0](xn)
print("gnll", gnll(m, yn, v).item(), 0.5 * NLLloss(yn, m, v).item())
print("gnll full", nn.GaussianNLLLoss(full=True, eps=1e-3)(m, yn, v.squeeze(1)).item())
try:
    gnll(m, yn, -v)
except ValueError as e:
    print(type(e).__name__, e)
