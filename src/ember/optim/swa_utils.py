"""Stochastic weight averaging and EMA: AveragedModel, SWALR, update_bn and the avg fns."""
import itertools
import math
from copy import deepcopy

from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..ops.creation import tensor
from .. import dtypes
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import _lerp_

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA update of a list of averaged tensors: ``ema = lerp(ema, p, 1 - decay)``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError("Invalid decay value %s provided. Please provide a value in [0,1] "
                         "range." % decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
                for e, p in zip(ema_param_list, current_param_list):
                    _lerp_(e._array, p._array, 1 - decay)
                    e._bump()
            else:
                for e, p in zip(ema_param_list, current_param_list):
                    e.copy_(e * decay + p * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running-mean update of a list of averaged tensors."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if averaged_param_list[0].is_floating_point() or \
                    averaged_param_list[0].is_complex():
                w = 1 / (float(num_averaged) + 1)
                for a, p in zip(averaged_param_list, current_param_list):
                    _lerp_(a._array, p._array, w)
                    a._bump()
            else:
                for a, p in zip(averaged_param_list, current_param_list):
                    a.copy_(a + (p - a) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``(ema, p, n) -> decay * ema + (1 - decay) * p``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError("Invalid decay value %s provided. Please provide a value in [0,1] "
                         "range." % decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """``(avg, p, n) -> avg + (p - avg) / (n + 1)``."""
    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are the running average (SWA) or EMA of
    ``model``'s, updated by ``update_parameters(model)``."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=dtypes.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the
        average."""
        self_param = itertools.chain(self.module.parameters(), self.module.buffers()) \
            if self.use_buffers else self.parameters()
        model_param = itertools.chain(model.parameters(), model.buffers()) \
            if self.use_buffers else model.parameters()
        self_detached, model_detached = [], []
        copy_param = int(self.n_averaged) == 0
        with no_grad():
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach().to(p_averaged.device)
                self_detached.append(p_averaged.detach())
                model_detached.append(p_model_)
                if copy_param:
                    p_averaged.detach().copy_(p_model_)
            if int(self.n_averaged) > 0:
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    # torch updates each (device, dtype) group with one call, so an integer
                    # buffer never shares a call with the float parameters
                    groups = {}
                    for p_averaged, p_model in zip(self_detached, model_detached):
                        key = (str(p_averaged.device), p_averaged.dtype)
                        groups.setdefault(key, ([], []))
                        groups[key][0].append(p_averaged)
                        groups[key][1].append(p_model)
                    for (device, _), (averaged, current) in groups.items():
                        n_averaged = self.n_averaged.to(device)
                        if self.multi_avg_fn is not None:
                            self.multi_avg_fn(averaged, current, n_averaged)
                        elif device.startswith("cuda"):
                            get_swa_multi_avg_fn()(averaged, current, n_averaged)
                        else:
                            avg_fn = get_swa_avg_fn()
                            for p_averaged, p_model in zip(averaged, current):
                                p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
                else:
                    for p_averaged, p_model in zip(self_detached, model_detached):
                        n_averaged = self.n_averaged.to(p_averaged.device)
                        p_averaged.copy_(self.avg_fn(p_averaged, p_model, n_averaged))
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute every BatchNorm's running statistics with one pass over ``loader``."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` (cos or linear), then
    hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got %s"
                             % anneal_strategy)
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError("anneal_epochs must be equal or greater than 0, got %s"
                             % anneal_epochs)
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" \
            else self._linear_anneal

    def state_dict(self):
        """The attributes, without the optimizer and the anneal function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Restore ``state_dict`` and rebuild the anneal function."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
