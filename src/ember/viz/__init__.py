"""ember.viz: the backward graph as DOT, SVG and an interactive HTML page."""
from .dot import Digraph, make_dot
from .html import to_html
from .summary import summary

__all__ = ["make_dot", "Digraph", "to_html", "summary"]
