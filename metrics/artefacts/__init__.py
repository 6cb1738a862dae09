"""Writers of a run's artefacts (docs/semantics.md section 4), shared by the offline folder and the
server's download. Each writes to a text file its caller opened (UTF-8, `newline=""`: the csv module
ends its rows itself)."""
