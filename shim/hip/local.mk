# HIP runtime backend (not yet written).
