"""Draw the backward graph that autograd records, as DOT text, SVG and an HTML page.

Every operation on a tensor that requires grad adds a node (its ``grad_fn``) to a graph that
``backward()`` walks in reverse. ``ember.viz.make_dot`` turns that graph into Graphviz DOT
text: one box per ``grad_fn`` (named as in PyTorch: ``MulBackward0``, ``AddmmBackward0``),
leaves labelled with parameter names and shapes, saved tensors with their version.
``ember.viz.to_html`` writes the same graph as one self-contained interactive page.

It draws three graphs, each as NAME.dot and NAME.html (and NAME.svg when Graphviz's ``dot``
program is installed) in ``--out`` (``ember-out/graphs`` by default): ``first_example`` (the
first example of the notes this project started from), ``mlp`` (a small model) and ``dynamic`` (a
graph whose length the data decided).

Run:
    python examples/graph.py                 # writes into ./ember-out/graphs
    python examples/graph.py --steps 2       # smoke run (CI); --out DIR to choose the folder
"""
import argparse
import os
import shutil
import subprocess

import ember as torch
from ember import nn

OUT = os.path.join("ember-out", "graphs")
SEED = 0


def write(name, output, out_dir, params=None):
    dot = torch.viz.make_dot(output, params=params, show_saved=True)
    path = os.path.join(out_dir, name + ".dot")
    with open(path, "w", encoding="utf-8") as f:
        f.write(str(dot))
    written = [path]
    if shutil.which("dot"):  # the Graphviz program (apt install graphviz)
        subprocess.run(["dot", "-Tsvg", path, "-o", path[:-4] + ".svg"], check=True)
        written.append(path[:-4] + ".svg")
    torch.viz.to_html(output, os.path.join(out_dir, name + ".html"), params=params)
    written.append(os.path.join(out_dir, name + ".html"))
    print("%-10s -> %s" % (name, ", ".join(written)))
    return dot


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=None, help="accepted for CI; unused")
    parser.add_argument("--out", default=OUT, help="folder for the files it writes")
    args = parser.parse_args()
    torch.manual_seed(SEED)
    os.makedirs(args.out, exist_ok=True)

    # 1. The notes' first example: y = x + 2, z = y * y * 4, out = z.mean()
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    out = (y * y * 4).mean()
    dot = write("first_example", out, args.out, params={"x": x})
    print(dot)
    print("out.grad_fn:", out.grad_fn, "\n  next_functions:", out.grad_fn.next_functions)

    # 2. A model: leaves are the parameters, named by named_parameters()
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    loss = nn.functional.cross_entropy(model(torch.randn(5, 4)), torch.tensor([0, 1, 2, 0, 1]))
    write("mlp", loss, args.out, params=dict(model.named_parameters()))
    print(torch.viz.summary(loss))

    # 3. Graphs are dynamic: Python control flow decides what gets recorded
    x = torch.randn(3, requires_grad=True)
    y = x
    while y.norm() < 10:
        y = y * 2
    write("dynamic", y.sum(), args.out, params={"x": x})
    print("the graphs are in", os.path.abspath(args.out))


if __name__ == "__main__":
    main()
