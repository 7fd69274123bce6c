# CUDA driver backend (rules added with its first files; appends to GS_BACKEND_LIBS).
