"""Writers for the artefacts of an extraction run (docs/semantics.md section 4).

Each writes to a text file its caller opened (UTF-8, `newline=""`: the csv module ends its rows
itself), so the offline folder (`metrics.pipeline.extraction_folder`) and the server's download
(`exports`, the only writer here that reads the database) share them.
"""
