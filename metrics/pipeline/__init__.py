"""The one scoring pipeline: documents -> chunks -> a partial result per chunk -> one merge.

`executors` runs the chunks (in this process, in a local process pool, or as a Celery chord);
`spans` and `attributes` define each task's chunk, partial result and merge. The merge is the only
place where the results of two chunks meet, and tests hold merge(chunks) equal to one pass.
"""
