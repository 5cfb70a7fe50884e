"""``torch.hub``: pretrained weights by URL and models from a ``hubconf.py``.

``load_state_dict_from_url`` uses torch's cache (``$TORCH_HOME/hub/checkpoints``, by default
``~/.cache/torch/hub``), so weights torch already downloaded load without a network; others
are downloaded with :mod:`urllib` (offline, that raises ``URLError``). ``load`` runs the entry
points of a local ``hubconf.py`` (``source="local"``) or of a GitHub repository torch has
already downloaded into the cache.
"""
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import uuid
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from .serialization import load as _load

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
MODULE_HUBCONF = "hubconf.py"
_hub_dir = [None]


def _get_torch_home():
    return os.path.expanduser(os.getenv(
        "TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")))


def get_dir():
    """The hub cache directory (``set_dir``'s, else ``$TORCH_HOME/hub``)."""
    if os.getenv("TORCH_HUB"):
        import warnings
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead")
    if _hub_dir[0] is not None:
        return _hub_dir[0]
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Use ``d`` as the hub cache directory."""
    _hub_dir[0] = os.path.expanduser(d)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download ``url`` to ``dst`` (through a temporary file; checks the SHA256 prefix)."""
    dst = os.path.expanduser(dst)
    tmp_dst = dst + "." + uuid.uuid4().hex + ".partial"
    req = Request(url, headers={"User-Agent": "torch.hub"})
    try:
        with urlopen(req) as u, open(tmp_dst, "w+b") as f:
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            while True:
                buffer = u.read(128 * 1024)
                if len(buffer) == 0:
                    break
                f.write(buffer)
                if sha256 is not None:
                    sha256.update(buffer)
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError('invalid hash value (expected "%s", got "%s")'
                                   % (hash_prefix, digest))
        shutil.move(tmp_dst, dst)
    finally:
        if os.path.exists(tmp_dst):
            os.remove(tmp_dst)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """The object saved at ``url``, from the cache when there (else downloaded first)."""
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stderr.write('Downloading: "%s" to %s\n' % (url, cached_file))
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)


def _repo_dir(repo_or_dir, source):
    if source not in ("github", "local"):
        raise ValueError('Unknown source: "%s". Allowed values: "github" | "local".' % source)
    if source == "local":
        return repo_or_dir
    owner_name, _, ref = repo_or_dir.partition(":")
    owner, _, name = owner_name.partition("/")
    hub = get_dir()
    candidates = ([ref] if ref else ["main", "master"])
    for r in candidates:
        d = os.path.join(hub, "_".join([owner, name, r.replace("/", "_")]))
        if os.path.isdir(d):
            return d
    raise RuntimeError("ember.hub: %s is not in the hub cache (%s); ember does not download "
                       "repositories. Clone it and use source='local'." % (repo_or_dir, hub))


def _hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_dir)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    return module


def _entry(module, model):
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError("Cannot find callable %s in hubconf" % model)
    return func


def list(github, force_reload=False, skip_validation=False, trust_repo="check",  # noqa: A001
         verbose=True, source="github"):
    """The entry points a repository's ``hubconf.py`` defines."""
    module = _hubconf(_repo_dir(github, source))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False,  # noqa: A001
         trust_repo="check", source="github"):
    """The docstring of a hub entry point."""
    return _entry(_hubconf(_repo_dir(github, source)), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """``model(*args, **kwargs)`` from the repository's ``hubconf.py``."""
    source = source.lower()
    repo_dir = _repo_dir(repo_or_dir, source)
    return _entry(_hubconf(repo_dir), model)(*args, **kwargs)
