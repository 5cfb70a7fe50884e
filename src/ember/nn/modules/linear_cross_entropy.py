"""``torch.nn.modules.linear_cross_entropy``: in torch, the private chunked kernels behind
``F.linear_cross_entropy`` (no public names). ember's ``linear_cross_entropy`` is in
``ember.nn.functional``; this module makes torch's import path resolve."""
__all__: list = []
