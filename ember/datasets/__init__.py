"""ember.datasets: small data sets shipped inside the package, and synthetic generators."""
