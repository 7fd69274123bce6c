# docs: rules added with its first files.
