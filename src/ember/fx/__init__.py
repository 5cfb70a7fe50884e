"""``torch.fx``: capture a Module's forward as a Graph of Nodes, edit it, and run it again as
Python code (``symbolic_trace``, ``Graph``, ``GraphModule``, ``Interpreter``, ``Transformer``,
``replace_pattern``)."""
from .graph import CodeGen, Graph, PythonCode
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy, TraceError
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .subgraph_rewriter import replace_pattern
from . import passes

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Node", "Proxy",
           "Interpreter", "Transformer", "replace_pattern", "map_arg", "PythonCode",
           "TraceError", "passes"]
