# tools: rules added with its first files.
