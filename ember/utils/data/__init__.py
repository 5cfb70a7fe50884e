"""ember.utils.data: datasets, samplers and DataLoader."""
