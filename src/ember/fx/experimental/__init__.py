"""``torch.fx.experimental``: graph passes built on fx (``optimization``: conv/bn fusion,
dropout removal, subgraph extraction)."""
