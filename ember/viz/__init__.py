"""ember.viz: the backward graph as DOT, SVG and an interactive HTML page."""
